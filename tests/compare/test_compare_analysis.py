"""analyze(): orchestration, JSON output, reproducibility, audit badges, lazy imports, validation."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from knowmeter.compare import AuditStatus, CompareConfig, Observation, analyze, methodology_audit
from knowmeter.errors import InputError
from knowmeter.gold import GoldComparison, GoldEvidence, GoldSource, StoredGold
from knowmeter.stats import ConfidenceInterval
from tests.compare.compare_factory import FAST, observations, shifted

LAYERS3 = ("fact", "behavior", "judge")


def _run(seed: int = 0, repeats: int = 1, n: int = 30) -> list[Observation]:
    rng = np.random.default_rng(seed)
    control = {layer: rng.normal(3.9, 0.5, (n, repeats)) for layer in LAYERS3}
    treatment = {layer: shifted(v, 0.3, 0.4, seed + k) for k, (layer, v) in enumerate(control.items())}
    judges_c = {"a": control["judge"], "b": control["judge"] + rng.normal(0, 0.3, (n, repeats))}
    judges_t = {"a": treatment["judge"], "b": treatment["judge"] + rng.normal(0, 0.3, (n, repeats))}
    return observations("control", control, judges=judges_c) + observations("treatment", treatment, judges=judges_t)


def _strict_json(text: str) -> object:
    def refuse(token: str) -> float:
        raise AssertionError(f"non-standard JSON number {token}")

    return json.loads(text, parse_constant=refuse)


def test_same_seed_same_bytes_and_seed_is_recorded() -> None:
    obs = _run(repeats=2)
    first = analyze(obs, control="control", config=FAST).model_dump_json()
    assert first == analyze(list(reversed(obs)), control="control", config=FAST).model_dump_json()
    other = analyze(obs, control="control", config=FAST.model_copy(update={"seed": 2})).model_dump_json()
    assert other != first
    data = _strict_json(first)
    assert isinstance(data, dict)
    ci = data["comparisons"][0]["metrics"]["composite"]["diff"]["bca"]
    assert (ci["method"], ci["b"], ci["seed"], ci["level"]) == ("bca", 2000, 1, 0.95)


def test_unknowns_serialise_as_null_never_nan() -> None:
    obs = _run(n=1)
    obs.append(Observation(sample_id="nan", variant="control", scores={"composite": math.nan}))
    text = analyze(obs, control="control", config=FAST).model_dump_json()
    assert "NaN" not in text and "Infinity" not in text
    _strict_json(text)


def test_defaults_first_variant_is_control_and_others_are_treatments() -> None:
    obs = _run()
    extra = [replace(o, variant="third") for o in obs if o.variant == "treatment"]
    analysis = analyze(obs + extra, config=FAST)
    assert analysis.control == "control" and analysis.treatments == ["treatment", "third"]
    assert [pc.treatment for pc in analysis.comparisons] == ["treatment", "third"]
    assert set(analysis.summaries) == {"control", "treatment", "third"}
    only = analyze(obs + extra, control="control", treatments=["third"], config=FAST)
    assert [pc.treatment for pc in only.comparisons] == ["third"]


def test_unknown_variant_is_an_input_error() -> None:
    with pytest.raises(InputError, match="variant 'nope' has no results"):
        analyze(_run(), control="nope", config=FAST)


def test_empty_run_is_a_failing_solo() -> None:
    analysis = analyze([], config=FAST)
    assert analysis.verdict.level == "SOLO" and analysis.verdict.exit_code == 1
    assert analysis.audit.difference_significant.status == AuditStatus.NOT_APPLICABLE


def test_audit_badges_carry_their_numbers() -> None:
    analysis = analyze(_run(repeats=3), control="control", config=FAST)
    audit = analysis.audit
    assert audit.judges_agree.status == AuditStatus.PASS and audit.judges_agree.value is not None
    assert audit.difference_significant.status == AuditStatus.PASS
    assert audit.difference_significant.value == analysis.comparisons[0].metrics["composite"].p_adjusted
    assert audit.saturated.status in (AuditStatus.PASS, AuditStatus.WARN, AuditStatus.FAIL)
    assert audit.saturated.value == analysis.comparisons[0].saturation.last_narrowing  # type: ignore[union-attr]
    assert audit.human_aligned.status == AuditStatus.UNKNOWN and audit.human_aligned.value is None


def test_audit_without_repeats_or_judges_never_fakes_a_pass() -> None:
    obs = [replace(o, judge_scores={}) for o in _run()]
    audit = analyze(obs, control="control", config=FAST).audit
    assert audit.judges_agree.status == AuditStatus.NOT_APPLICABLE
    assert audit.saturated.status == AuditStatus.UNKNOWN


def _gold(alpha: float | None, contamination: str | None = None) -> GoldComparison:
    ci = ConfidenceInterval(method="percentile", level=0.95, low=None, high=None, b=100, seed=0)
    return GoldComparison(
        annotator="alice",
        judges=["j"],
        scale_min=1,
        scale_max=5,
        n_gold=10,
        n_judged=10,
        n_matched=10,
        missing_in_run=[],
        not_in_gold=0,
        alpha_interval=alpha,
        alpha_ordinal=alpha,
        alpha_ci_percentile=ci,
        alpha_ci_bca=ci.model_copy(update={"method": "bca"}),
        kappa_quadratic=None,
        pearson=None,
        mean_abs_diff=None,
        agreement=None,
        contamination_warning=contamination,
    )


@pytest.mark.parametrize(
    ("alpha", "contamination", "status"),
    [
        (0.85, None, AuditStatus.PASS),
        (0.7, None, AuditStatus.WARN),
        (0.3, None, AuditStatus.FAIL),
        (None, None, AuditStatus.UNKNOWN),
        (0.9, "annotator is a judge", AuditStatus.WARN),
    ],
)
def test_human_aligned_badge(alpha: float | None, contamination: str | None, status: AuditStatus) -> None:
    audit = methodology_audit([], {}, FAST, gold=_evidence({"t": _gold(alpha, contamination)}))
    assert audit.human_aligned.status == status and audit.human_aligned.value == alpha


def _evidence(comparisons: dict[str, GoldComparison], stale: str | None = None) -> GoldEvidence:
    source = GoldSource(directory="gold", sha256="0123456789abcdef", annotator="alice", version="1", n_annotations=10)
    stored = StoredGold(
        computed_at="2026-01-01T00:00:00+00:00", gold=source, scores_sha256="f" * 16, comparisons=comparisons
    )
    return GoldEvidence(stored, stale)


def test_human_aligned_takes_the_worst_variant_and_says_what_it_rests_on() -> None:
    check = methodology_audit([], {}, FAST, gold=_evidence({"a": _gold(0.9), "b": _gold(0.7)})).human_aligned
    assert check.status == AuditStatus.WARN and check.value == 0.7 and check.n == 10
    assert check.interval is not None and check.interval.b == 100
    assert "variant b, the lowest of 2" in check.detail and "against alice over 10 of 10" in check.detail
    assert "gold 0123456789abcdef" in check.detail and "CI unknown" in check.detail


def test_human_aligned_is_unknown_when_the_stored_comparison_is_stale() -> None:
    check = methodology_audit([], {}, FAST, gold=_evidence({"a": _gold(0.9)}, stale="scores changed")).human_aligned
    assert check.status == AuditStatus.UNKNOWN and check.value is None
    assert "out of date: scores changed" in check.detail


@pytest.mark.slow
def test_import_does_not_pull_scipy() -> None:
    code = "import sys, knowmeter.compare, knowmeter.stats, knowmeter.gold; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_observation_and_config_validation() -> None:
    with pytest.raises(ValueError, match="unknown score key"):
        Observation(sample_id="s", variant="v", scores={"compsite": 3.0})
    with pytest.raises(ValueError, match="unknown layer"):
        Observation(sample_id="s", variant="v", layers_used=("facts",))
    derived = Observation(sample_id="s", variant="v", scores={"judge": 4.0, "fact": math.nan, "behavior": None})
    assert derived.layer_set == ("judge",)
    assert Observation(sample_id="s", variant="v", layers_used=("judge", "fact")).layer_set == ("fact", "judge")
    with pytest.raises(ValidationError):
        CompareConfig(power=0.01, alpha=0.05)
    with pytest.raises(ValidationError):
        CompareConfig(ci_method="basic")  # type: ignore[arg-type]


def test_each_variant_is_indexed_scored_and_paired_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The announcements and the results share one index, one score matrix and one pairing per
    variant (issue 32: each was built again for the announcement, the summary and the test)."""
    from knowmeter.compare import _align, _pair

    built: list[str] = []
    aligned: list[int] = []
    build, align = _align.Arm.build.__func__, _pair.align  # type: ignore[attr-defined]

    def counting_build(cls: type[_align.Arm], variant: str, observed: Any) -> _align.Arm:
        built.append(variant)
        return build(cls, variant, observed)  # type: ignore[no-any-return]

    def counting_align(*args: Any) -> Any:
        aligned.append(1)
        return align(*args)

    monkeypatch.setattr(_align.Arm, "build", classmethod(counting_build))
    monkeypatch.setattr(_pair, "align", counting_align)
    analysis = analyze(_run(repeats=2), control="control", config=FAST)
    assert sorted(built) == ["control", "treatment"] and len(aligned) == 1
    assert analysis.comparisons[0].metrics["composite"].n_pairs == 60


def test_observations_checked_on_the_fast_path_as_before() -> None:
    """Layer lists already in canonical order are kept as given (shared, not copied); any other
    is put in order or refused, and score keys are checked, whichever path checks them."""
    given = ("fact", "judge")
    assert Observation(sample_id="s", variant="v", layers_used=given).layers_used is given
    assert Observation(sample_id="s", variant="v", layers_used=("judge", "behavior")).layers_used == (
        "behavior",
        "judge",
    )
    with pytest.raises(ValueError, match=r"unknown layer\(s\) \['x'\]"):
        Observation(sample_id="s", variant="v", layers_used=("judge", "x"))
    with pytest.raises(ValueError, match=r"unknown score key\(s\) \['zz'\]"):
        Observation(sample_id="s", variant="v", scores={"fact": 1.0, "zz": 2.0})
