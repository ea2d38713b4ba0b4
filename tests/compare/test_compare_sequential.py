"""The sequential stop rule (``take_look``) and the level a stopped run is decided at
(``CompareConfig.sequential_alpha``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from knowmeter.compare import (
    Observation,
    SequentialRecord,
    VerdictLevel,
    analyze,
    look_samples,
    take_look,
)
from tests.compare.compare_factory import FAST, observations

LAYERS = ("fact", "behavior")


def _arms(n: int, gain: float, seed: int, sd: float = 0.6) -> tuple[list[Observation], list[Observation]]:
    rng = np.random.default_rng(seed)
    base = rng.normal(3.8, 0.5, n)
    control = {layer: np.clip(base + rng.normal(0, sd, n), 1, 5) for layer in LAYERS}
    treatment = {layer: np.clip(base + gain + rng.normal(0, sd, n), 1, 5) for layer in LAYERS}
    return observations("control", control), observations("treatment", treatment)


def _run(control: list[Observation], treatment: list[Observation], n: int) -> SequentialRecord:
    record = SequentialRecord(alpha=0.05, planned_samples=n, look_samples=look_samples(n, 20), order_seed=0)
    while record.stopped is None:
        upto = record.look_samples[len(record.looks)]
        keep = {f"s{i:03d}" for i in range(upto)}
        take_look(
            [o for o in control if o.sample_id in keep],
            {"treatment": [o for o in treatment if o.sample_id in keep]},
            record,
            FAST,
        )
    return record


def test_looks_start_at_min_pairs_and_end_at_the_plan():
    assert look_samples(200, 20) == [40, 80, 120, 160, 200]
    assert look_samples(50, 20) == [20, 30, 40, 50]
    assert look_samples(200, 20, looks=10) == [20, 40, 60, 80, 100, 120, 140, 160, 180, 200]
    assert look_samples(23, 20) == [20, 23]
    assert look_samples(10, 20) == [10]  # too few samples to look early: the fixed design


def test_a_clear_gain_stops_at_the_first_look():
    control, treatment = _arms(200, 1.0, seed=1)
    record = _run(control, treatment, 200)
    assert record.stopped == "efficacy" and len(record.looks) == 1
    look = record.looks[0]
    assert look.samples == 40 and look.boundary_z == pytest.approx(3.29, abs=0.01)
    assert look.pairs[0].decided and look.pairs[0].z is not None and look.pairs[0].z > look.boundary_z
    assert record.reason is not None and "after 40 of 200 samples" in record.reason
    assert record.stop_alpha == pytest.approx(0.001, rel=0.01)


def test_a_gain_the_plan_cannot_detect_stops_for_futility():
    """No change at all, and per-sample noise so wide that the planned 60 samples could detect a
    change of max_mde 0.5 only by luck: the run stops early and names the conditional power."""
    control, treatment = _arms(60, 0.0, seed=2, sd=2.5)
    record = _run(control, treatment, 60)
    assert record.stopped == "futility" and record.looks[-1].samples < 60
    pair = record.looks[-1].pairs[0]
    assert pair.power_gain is not None and pair.power_gain < 0.10 and pair.power_loss is not None
    assert record.reason is not None and "futility" in record.reason and "conditional power" in record.reason


def test_no_change_stops_once_no_significant_result_can_come():
    """A powered plan and no change: no early call; the run goes on while a change of max_mde
    could still be shown (late in the run only a trend near zero is futile)."""
    control, treatment = _arms(60, 0.0, seed=3, sd=0.3)
    record = _run(control, treatment, 60)
    assert [look.stop for look in record.looks[:-1]] == [None] * (len(record.looks) - 1)
    assert record.stopped in ("futility", "planned_n") and record.looks[-1].fraction >= 0.6
    assert all(look.pairs[0].z is not None and abs(look.pairs[0].z) < look.boundary_z for look in record.looks)


def test_a_plan_too_small_to_look_early_is_the_fixed_design():
    control, treatment = _arms(12, 0.0, seed=3)
    record = _run(control, treatment, 12)
    assert record.stopped == "planned_n" and [look.samples for look in record.looks] == [12]
    assert record.looks[0].boundary_z == pytest.approx(1.96, abs=1e-3)
    assert record.reason is not None and record.reason.startswith("ran all 12 planned samples")


def test_the_sequential_level_replaces_alpha_in_the_tests():
    control, treatment = _arms(40, 0.25, seed=4)
    fixed = analyze(control + treatment, control="control", config=FAST)
    p = fixed.comparisons[0].metrics["composite"].p_value
    assert p is not None and 0.001 < p < 0.05 and fixed.verdict.level is VerdictLevel.PROGRESS
    strict = analyze(control + treatment, control="control", config=FAST.model_copy(update={"sequential_alpha": 0.001}))
    composite = strict.comparisons[0].metrics["composite"]
    assert composite.significant is False and strict.verdict.level is not VerdictLevel.PROGRESS
    assert composite.diff.percentile.level == pytest.approx(0.999)  # its interval is the look's, too
    assert strict.comparisons[0].families[0].level == 0.001


def test_the_mcnemar_failure_guard_keeps_the_fixed_alpha_at_a_stop():
    """Six pairs only the treatment errored on: exact McNemar p 0.031 — above a look's level of
    0.001 but below alpha: the guard still makes a clear win CAUTIOUS."""
    control, treatment = _arms(40, 1.0, seed=5)
    failed = {o.sample_id for o in treatment[:6]}
    treatment = [replace(o, ok=False, scores={}, layers_used=()) if o.sample_id in failed else o for o in treatment]
    config = FAST.model_copy(update={"sequential_alpha": 0.001})
    analysis = analyze(control + treatment, control="control", config=config)
    assert analysis.comparisons[0].errors.p_value == pytest.approx(2 * 0.5**6)
    assert analysis.comparisons[0].metrics["composite"].significant
    assert (analysis.verdict.level, analysis.verdict.pairs[0].rule) == (VerdictLevel.CAUTIOUS, "errors_differ")
