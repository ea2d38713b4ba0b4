"""The ``comprehension`` section of ``report.json``, built from stored results alone (so
``knowmeter report RUN`` re-decides it), and its terminal summary."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from knowmeter._record import RecordError
from knowmeter.ask import unusable_reply
from knowmeter.comprehension._stats import Answer, StatsConfig, comprehension_stats, graded_rows
from knowmeter.comprehension._verdict import Parties, skill_verdict
from knowmeter.report import NO_OVERRIDES, Ordered, ReportOverrides, SectionBuilder, TaskKey, given
from knowmeter.skillgraph import Dimension
from knowmeter.store import RunRecord, TaskRecord


class _Comprehension:
    """The section folded over a run's task records: each record's grading is kept (comprehension
    runs are small) and read in the report's order."""

    def __init__(self, run: RunRecord, overrides: ReportOverrides) -> None:
        self._run, self._overrides = run, overrides
        self._records: Ordered[Answer] = Ordered()

    def add(self, key: TaskKey, task: TaskRecord) -> None:
        # what the section reads of a task (the rest — the answer, its trace — is not kept)
        if task.comprehension is not None:
            self._records.add(key, Answer(task.role, task.repeat, task.comprehension))

    def result(self) -> dict[str, Any]:
        return _fields(self._run, list(self._records), self._overrides)


def _grading(answer: Answer) -> dict[str, Any]:
    comp = answer.result
    return {
        "repeat": answer.repeat,
        "graded": comp.graded,
        "verdict": comp.verdict,
        "ungraded_reason": comp.ungraded_reason,
        "behavior_pass_fraction": comp.behavior_pass_fraction,
        "overlap_ngrams": comp.overlap.overlap_ngrams if comp.overlap else [],
        "behaviors": [
            {
                "id": b.id,
                "verdict": b.verdict,
                "evidence_quote": b.evidence_quote,
                "rationale": b.rationale,
                "override": b.override,
                "review": b.review,
            }
            for b in comp.behavior_verdicts
        ],
    }


def case_rows(answers: Iterable[Answer]) -> list[dict[str, Any]]:
    """One row per case: its dimension, behaviors (derived ones named) and each arm's gradings."""
    rows: dict[str, dict[str, Any]] = {}
    for answer in answers:
        comp = answer.result
        row = rows.setdefault(
            comp.case_id,
            {
                "case_id": comp.case_id,
                "dimension": comp.dimension,
                "concept_field": comp.concept_field,
                "transfer": comp.transfer,
                "behaviors": [b.id for b in comp.behaviors],
                "derived_behaviors": comp.derived_behaviors,
                "baseline": [],
                "with_skill": [],
            },
        )
        row[answer.arm].append(_grading(answer))
    return sorted(rows.values(), key=lambda r: (int(r["dimension"][1:]), r["case_id"].zfill(12)))


def comprehension_section(overrides: ReportOverrides = NO_OVERRIDES) -> SectionBuilder:
    """The section builder (``seed`` / ``bootstrap_samples`` / ``min_pairs`` / ``max_mde`` overrides
    as in ``knowmeter report``)."""
    return lambda run: _Comprehension(run, overrides)


def _fields(run: RunRecord, records: list[Answer], ov: ReportOverrides) -> dict[str, Any]:
    """The section's fields from the records in the report's order."""
    info = run.comprehension
    if info is None:
        raise RecordError("run.json has no comprehension block: this is not a comprehension run")
    base = StatsConfig()
    cfg = StatsConfig(
        seed=given(ov.seed, run.seed),
        bootstrap_samples=given(ov.bootstrap_samples, run.config.bootstrap_samples),
        min_pairs=given(ov.min_pairs, base.min_pairs),
        max_mde=given(ov.max_mde, base.max_mde),
    )
    stats = comprehension_stats(graded_rows(records), cfg)
    executor = run.executor
    parties = Parties(
        executor.name,
        executor.model,
        not executor.non_llm,
        tuple((g.name, g.model, not g.non_llm) for g in info.graders),
    )
    reviews = sum(len(r.result.review) for r in records)
    cases = case_rows(records)
    ungraded = [
        f"case {c['case_id']} ({c['dimension']}, {arm.replace('_', '-')}, repeat {g['repeat']}): {g['ungraded_reason']}"
        for c in cases
        for arm in ("baseline", "with_skill")
        for g in c[arm]
        if not g["graded"]
    ]
    return {
        "comprehension": {
            "skill": info.skill.model_dump(),
            "eval_file": info.eval_file.model_dump(),
            "notes": info.notes,
            "grader_prompt_hash": info.grader_prompt_hash,
            "graders": [g.model_dump() for g in info.graders],
            "dimension_names": {d.value: d.long_name for d in Dimension},
            "overall": stats["overall"],
            "dimensions": stats["dimensions"],
            "settings": stats["settings"],
            "verdict": skill_verdict(
                stats,
                parties,
                reviews=reviews,
                broken_replies=sum(unusable_reply("judge") in u for u in ungraded),
                eval_dimensions=info.dimensions,
                flags=info.flags,
            ),
            "cases": cases,
            "ungraded": ungraded,
        }
    }
