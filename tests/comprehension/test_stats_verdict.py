"""Comprehension statistics against scipy, edge cases, and every verdict rule."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest
from scipy import stats as sps

from knowmeter.comprehension import Graded, Parties, StatsConfig, comprehension_stats, model_family, skill_verdict

if TYPE_CHECKING:
    from knowmeter.store import RunRecord

#: run.json files written by earlier versions (tests/store/test_run_record.py reads them)
STORED_RUNS = Path(__file__).parents[1] / "store" / "fixtures"

CFG = StatsConfig(bootstrap_samples=2000, seed=3)
#: an LLM agent and two independent LLM graders (Skill Graph's PASS is confirmed by two)
LLM = Parties("claude", "claude-sonnet-4", True, (("openai:gpt-5", "gpt-5", True), ("gemini", "gemini-2.5-pro", True)))


def rows(spec: Mapping[str, Sequence[tuple[bool | None, bool | None]]], repeat: int = 0) -> list[Graded]:
    """``{dimension: [(baseline passed, with-skill passed) per case]}`` → gradings."""
    out = []
    n = 0
    for dim, cases in spec.items():
        for b, s in cases:
            n += 1
            for arm, p in (("baseline", b), ("with_skill", s)):
                out.append(Graded(str(n), dim, arm, repeat, p, None if p is None else (1.0 if p else 0.25)))
    return out


def test_pass_rates_wilson_and_mcnemar_match_scipy() -> None:
    data = rows({"C1": [(False, True)] * 7 + [(True, True)] * 2 + [(True, False)], "C4": [(False, True)] * 3})
    st = comprehension_stats(data, CFG)
    overall = st["overall"]
    assert overall["with_skill"]["cases_passed"] == 12 and overall["with_skill"]["cases_graded"] == 13
    ci = sps.binomtest(12, 13).proportion_ci(0.95, method="wilson")
    assert overall["with_skill"]["wilson"] == pytest.approx([ci.low, ci.high], abs=1e-9)
    m = overall["paired"]["mcnemar"]
    assert (m["treatment_only"], m["control_only"]) == (10, 1)
    assert m["p_value"] == pytest.approx(sps.binomtest(1, 11, 0.5).pvalue, abs=1e-12)
    assert overall["paired"]["difference_in_pass_rate"] == pytest.approx(9 / 13)
    boot = overall["paired"]["behavior_fraction_difference"]
    assert boot["n_clusters"] == 13 and boot["estimate"] == pytest.approx(9 * 0.75 / 13)
    c1, c4 = st["dimensions"]["C1"]["paired"], st["dimensions"]["C4"]["paired"]
    p1, p4 = c1["mcnemar"]["p_value"], c4["mcnemar"]["p_value"]
    lo, hi = sorted((p1, p4))
    expected = {lo: min(1.0, 2 * lo), hi: max(min(1.0, 2 * lo), hi)}  # Holm, family of 2
    assert c1["p_holm"] == pytest.approx(expected[p1]) and c4["p_holm"] == pytest.approx(expected[p4])


def test_repeats_are_one_case_by_majority_and_clustered() -> None:
    data = (
        rows({"C2": [(False, True)] * 4}, 0)
        + rows({"C2": [(False, True)] * 4}, 1)
        + rows({"C2": [(True, False)] * 4}, 2)
    )
    st = comprehension_stats(data, CFG)["overall"]
    assert st["with_skill"]["cases_graded"] == 4 and st["with_skill"]["cases_passed"] == 4  # 2 of 3 repeats
    assert st["paired"]["cases_paired"] == 4
    assert st["paired"]["behavior_fraction_difference"]["n_clusters"] == 4
    assert st["paired"]["behavior_fraction_difference"]["n"] == 12


def test_empty_and_ungraded_are_unknown_not_zero() -> None:
    st = comprehension_stats(rows({"C3": [(None, None), (None, True)]}), CFG)["overall"]
    assert st["baseline"]["cases_graded"] == 0 and st["baseline"]["pass_rate"] is None
    assert st["baseline"]["wilson"] is None and st["baseline"]["ungraded"] == 2
    assert st["paired"]["cases_paired"] == 0 and st["paired"]["mcnemar"]["p_value"] is None
    assert st["paired"]["behavior_fraction_difference"] is None and st["paired"]["mde"] is None
    assert st["paired"]["underpowered"]
    verdict = skill_verdict(comprehension_stats(rows({"C3": [(None, None)]}), CFG), LLM)
    assert verdict["level"] == "UNVERIFIED" and verdict["eval_score"] is None


ALL9 = [f"C{i}" for i in range(1, 10)]


def test_pass_needs_every_dimension_and_a_significant_difference() -> None:
    data = rows({d: [(False, True)] * 2 for d in ALL9})
    verdict = skill_verdict(comprehension_stats(data, CFG), LLM)
    assert verdict["level"] == "PASS" and verdict["eval_score"] == 5 and verdict["eval_failed_ids"] == []
    same_family = Parties("claude", "claude-sonnet-4", True, (("claude:opus", "opus", True),))
    v = skill_verdict(comprehension_stats(data, CFG), same_family)
    assert v["level"] == "PROVISIONAL" and any("same model family (anthropic)" in c for c in v["caveats"])
    partial = rows({d: [(False, True)] * 3 for d in ALL9[:6]})
    v = skill_verdict(comprehension_stats(partial, CFG), LLM)
    assert v["level"] == "PROVISIONAL" and v["not_covered_dimensions"] == ["C7", "C8", "C9"]
    # Skill Graph's PROVISIONAL: a real pass by a single grader model, not yet confirmed by a second
    one = Parties("claude", "claude-sonnet-4", True, (("openai:gpt-5", "gpt-5", True),))
    v = skill_verdict(comprehension_stats(data, CFG), one)
    assert (v["level"], v["exit_code"]) == ("PROVISIONAL", 0)
    assert any(c.startswith("one grader: Skill Graph's PASS is confirmed by two") for c in v["caveats"])


def test_shallow_names_the_failing_dimensions() -> None:
    data = rows({"C1": [(False, False)], "C2": [(False, True)] * 5, "C8": [(False, True), (False, False)]})
    v = skill_verdict(comprehension_stats(data, CFG), LLM)
    assert v["level"] == "SHALLOW" and v["failing_dimensions"] == ["C1", "C8"]
    assert v["eval_failed_ids"] == ["1", "8"] and v["eval_score"] == 3.75  # 6 of 8
    assert v["reasons"][0] == "with the skill the agent fails 2 of 3 graded dimension(s): C1, C8"


def test_baseline_high_redundant_and_underpowered() -> None:
    high = rows({"C1": [(True, True)] * 3, "C4": [(True, True)]})
    v = skill_verdict(comprehension_stats(high, CFG), LLM)
    assert v["level"] == "SKIPPED_BASELINE_HIGH" and v["rule"] == "baseline_passes"
    redundant = rows({d: [(True, True)] * 3 + [(False, True)] * (1 if d == "C1" else 0) for d in ALL9})
    v = skill_verdict(comprehension_stats(redundant, CFG), LLM)
    assert v["level"] == "REDUNDANT", v
    # a run that cannot tell the skill from the baseline verifies nothing: not a (provisional) pass
    few = rows({"C1": [(False, True)], "C2": [(True, True)]})
    v = skill_verdict(comprehension_stats(few, CFG), LLM)
    assert (v["level"], v["rule"], v["exit_code"]) == ("UNVERIFIED", "cannot_tell", 1)
    assert "cannot tell it from the baseline" in v["reasons"][0] and v["eval_score"] == 5.0


def test_a_skill_that_makes_the_agent_worse_is_shallow_not_skipped() -> None:
    # §5.11 strict: the baseline passing every case does not excuse the skill failing where it
    # passed (the audit's 12/12 → 4/12, McNemar p = 0.0078)
    harm = rows({"C2": [(True, True)] * 4 + [(True, False)] * 8})
    v = skill_verdict(comprehension_stats(harm, CFG), LLM)
    assert v["level"] == "SHALLOW" and v["rule"] == "dimension_fails" and v["failing_dimensions"] == ["C2"]
    assert v["headline"] == "SHALLOW · with the skill the agent fails 1 of 1 graded dimension(s): C2"
    assert v["eval_score"] == 1.67 and v["eval_failed_ids"] == [str(i) for i in range(5, 13)]
    assert v["exit_code"] == 1


def test_answers_left_ungraded_by_the_grader_keep_a_passing_skill_unverified() -> None:
    # every graded case passes, but the grader failed on two answers: nothing to pass on (RULE-9)
    data = rows({d: [(False, True)] * 2 for d in ALL9} | {"C1": [(False, True), (None, True), (False, None)]})
    v = skill_verdict(comprehension_stats(data, CFG), LLM)
    assert (v["level"], v["rule"], v["exit_code"]) == ("UNVERIFIED", "ungraded", 1)
    assert v["reasons"][0].startswith("2 answer(s) left ungraded: the grader failed on them")
    assert v["eval_score"] is None
    # a failing dimension is a finding the ungraded answers cannot undo
    failing = rows({"C1": [(False, False), (None, True)], "C2": [(False, True)] * 3})
    assert skill_verdict(comprehension_stats(failing, CFG), LLM)["level"] == "SHALLOW"


@pytest.mark.parametrize(
    ("passed", "graded", "score"),
    [(k, 10, k / 2) for k in range(11)] + [(3, 6, 2.5), (15, 30, 2.5), (1, 3, 1.67), (2, 3, 3.33)],
)
def test_eval_score_is_continuous_on_skill_graphs_scale(passed: int, graded: int, score: float) -> None:
    # 5 × the pass rate on Skill Graph's 0.0–5.0 scale: 9/10 is 4.5, never a rounded 5/5
    data = rows({"C2": [(False, True)] * passed + [(False, False)] * (graded - passed)})
    assert skill_verdict(comprehension_stats(data, CFG), LLM)["eval_score"] == score


@pytest.mark.parametrize(
    ("executor", "model", "family"),
    [
        ("claude", None, "anthropic"),
        ("anthropic", "claude-haiku-4-5", "anthropic"),
        ("codex", None, "openai"),
        ("openai", "gpt-5-mini", "openai"),
        ("openai", "o3", "openai"),
        ("script", "gemini-2.5-pro", "google"),
        ("offline", None, None),
        ("script", "my-model", None),
    ],
)
def test_model_family(executor: str, model: str | None, family: str | None) -> None:
    assert model_family(executor, model) == family


def _record(case: int, role: str, passed: bool) -> dict[str, object]:
    """A stored task record of one graded answer (C2, one behavior)."""
    from knowmeter.store import BehaviorOutcome, CaseBehavior, ComprehensionResult

    verdict: Literal["PASS", "FAIL"] = "PASS" if passed else "FAIL"
    graded = ComprehensionResult(
        case_id=str(case),
        dimension="C2",
        concept_field="mental_model",
        transfer=None,
        behaviors=[CaseBehavior(id="b", kind="positive", description="b", derived=False)],
        derived_behaviors=[],
        verbatim_behavior=None,
        overlap=None,
        calls=[],
        cost_usd=0.0,
        graded=True,
        ungraded_reason=None,
        behavior_verdicts=[
            BehaviorOutcome(
                id="b",
                kind="positive",
                derived=False,
                verdict=verdict,
                passes=int(passed),
                gradings=1,
                evidence_quote="x",
                rationale="",
                override=None,
                review=None,
            )
        ],
        behavior_pass_fraction=1.0 if passed else 0.0,
        verdict=verdict,
        review=[],
    )
    return {"role": role, "repeat": 0, "comprehension": graded.model_dump(mode="json")}


def _folded(section: Any, run: RunRecord, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The section's fields from ``records`` folded in one at a time, as a report build does."""
    from knowmeter.store import TaskRecord

    fold = section(run)
    for n, rec in enumerate(records):
        variant = str(rec["role"])
        task = {"task_id": f"{n}::{variant}::r0", "sample_id": str(n), "variant": variant, "attempts": 1}
        times = {"cached": False, "started_at": "t", "finished_at": "t", "exec": {}}
        fold.add((0, f"{n:04}", variant), TaskRecord.model_validate({**task, **times, **rec}))
    result: dict[str, Any] = fold.result()
    return result


def test_knowmeter_report_overrides_reach_the_comprehension_verdict() -> None:
    """``knowmeter report --min-pairs / --max-mde`` re-decide a comprehension run (they were
    silently ignored: REDUNDANT stayed REDUNDANT however few pairs were asked for)."""
    from knowmeter.comprehension import comprehension_section
    from knowmeter.report import ReportOverrides
    from knowmeter.store import RunExecutor, RunRecord

    stored = RunRecord.model_validate(json.loads((STORED_RUNS / "run-v2-comprehension-e3f76f3.json").read_text()))
    assert stored.comprehension is not None
    run = stored.model_copy(
        update={
            "seed": 1,
            "config": stored.config.model_copy(update={"bootstrap_samples": 200}),
            "executor": RunExecutor(name="claude", identity="claude", non_llm=False, model="claude-sonnet-4"),
            "comprehension": stored.comprehension.model_copy(update={"graders": []}),
        }
    )
    # 20 cases pass with the skill, 18 without: no difference, and enough cases to see one
    records = [_record(n, "treatment", True) for n in range(1, 21)]
    records += [_record(n, "control", n > 2) for n in range(1, 21)]
    default = _folded(comprehension_section(), run, records)["comprehension"]
    assert default["verdict"]["level"] == "REDUNDANT"
    for overrides, reason in ((ReportOverrides(min_pairs=50), "(< 50)"), (ReportOverrides(max_mde=0.1), "(> 0.1)")):
        section = _folded(comprehension_section(overrides), run, records)["comprehension"]
        assert (section["verdict"]["level"], section["verdict"]["rule"]) == ("UNVERIFIED", "cannot_tell")
        assert reason in section["verdict"]["reasons"][0]
        given = {k: v for k, v in asdict(overrides).items() if v is not None}
        assert {k: section["settings"][k] for k in given} == given
