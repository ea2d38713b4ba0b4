"""The sequential stop rule (``take_look``) and the level a stopped run is decided at
(``CompareConfig.sequential_alpha``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from knowmeter.compare import (
    Design,
    Observation,
    SequentialRecord,
    VerdictLevel,
    analyze,
    look_samples,
    new_record,
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


def _run(
    control: list[Observation],
    treatment: list[Observation],
    n: int,
    design: Design = "haybittle-peto",
    futility: bool = False,
) -> SequentialRecord:
    record = new_record(n, 20, 0, design=design, futility=futility)
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
    assert look_samples(200, 20, 5) == [40, 80, 120, 160, 200]
    assert look_samples(50, 20, 5) == [20, 30, 40, 50]
    assert look_samples(200, 20, 10) == [20, 40, 60, 80, 100, 120, 140, 160, 180, 200]
    assert look_samples(23, 20, 5) == [20, 23]
    assert look_samples(10, 20, 10) == [10]  # too few samples to look early: the fixed design
    # Haybittle–Peto (the default) looks every tenth of the samples, obf every fifth
    assert new_record(50, 20, 0).look_samples == [20, 25, 30, 35, 40, 45, 50]
    assert new_record(50, 20, 0, design="obf").look_samples == [20, 30, 40, 50]


@pytest.mark.parametrize(("design", "first"), [("haybittle-peto", 20), ("obf", 40)])
def test_a_clear_gain_stops_at_the_first_look(design: Design, first: int):
    control, treatment = _arms(200, 1.0, seed=1)
    record = _run(control, treatment, 200, design)
    assert record.stopped == "efficacy" and len(record.looks) == 1
    look = record.looks[0]
    assert look.samples == first and look.boundary_z == pytest.approx(3.29, abs=0.01)
    assert look.pairs[0].decided and look.pairs[0].z is not None and look.pairs[0].z > look.boundary_z
    assert record.reason is not None and f"after {first} of 200 samples" in record.reason
    assert record.stop_alpha == pytest.approx(0.001, rel=0.01)


def test_a_gain_the_plan_cannot_detect_stops_for_futility():
    """No change at all, and per-sample noise so wide that the planned 60 samples could detect a
    change of max_mde 0.5 only by luck: the run stops early and names the conditional power."""
    control, treatment = _arms(60, 0.0, seed=2, sd=2.5)
    record = _run(control, treatment, 60, futility=True)
    assert record.stopped == "futility" and record.looks[-1].samples < 60
    pair = record.looks[-1].pairs[0]
    assert pair.power_gain is not None and pair.power_gain < 0.10 and pair.power_loss is not None
    assert record.reason is not None and "futility" in record.reason and "conditional power" in record.reason


def test_without_futility_a_hopeless_run_goes_on_to_the_planned_n():
    """The same data without ``--futility`` (the default): the futile looks are recorded, not
    acted on, so no dataset the fixed design would decide is cut short."""
    control, treatment = _arms(60, 0.0, seed=2, sd=2.5)
    record = _run(control, treatment, 60)
    assert record.stopped == "planned_n" and record.looks[-1].samples == 60 and not record.futility
    assert any(p.power_gain is not None and p.power_gain < 0.10 for look in record.looks for p in look.pairs)
    assert record.method.endswith("no futility stop")


def test_no_change_stops_once_no_significant_result_can_come():
    """A powered plan and no change: no early call; the run goes on while a change of max_mde
    could still be shown (late in the run only a trend near zero is futile)."""
    control, treatment = _arms(60, 0.0, seed=3, sd=0.3)
    record = _run(control, treatment, 60, futility=True)
    assert [look.stop for look in record.looks[:-1]] == [None] * (len(record.looks) - 1)
    assert record.stopped in ("futility", "planned_n") and record.looks[-1].fraction >= 0.6
    assert all(look.pairs[0].z is not None and abs(look.pairs[0].z) < look.boundary_z for look in record.looks)


def test_a_plan_too_small_to_look_early_is_the_fixed_design():
    control, treatment = _arms(12, 0.0, seed=3)
    record = _run(control, treatment, 12)
    assert record.stopped == "planned_n" and [look.samples for look in record.looks] == [12]
    assert record.looks[0].boundary_z == pytest.approx(1.96, abs=1e-3) and record.stop_alpha == 0.05
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


def test_a_significant_gain_cautious_for_a_gate_does_not_stop_the_run():
    """The composite is far above the boundary at the first look, but the behavior layer's
    treatment mean is under the 3.5 gate: CAUTIOUS for a point estimate more samples could lift,
    so the look is not firm and the run goes on (stopping there cost power in the simulation)."""
    rng = np.random.default_rng(6)
    n = 60
    base = rng.normal(3.0, 0.4, n)
    control = {
        "fact": np.clip(base + rng.normal(0, 0.3, n), 1, 5),
        "behavior": np.clip(base + rng.normal(0, 0.3, n), 1, 5),
    }
    treatment = {
        "fact": np.clip(base + 1.5 + rng.normal(0, 0.3, n), 1, 5),
        "behavior": np.clip(base + 0.2 + rng.normal(0, 0.3, n), 1, 5),
    }
    record = _run(observations("control", control), observations("treatment", treatment), n)
    first = record.looks[0]
    assert first.pairs[0].z is not None and first.pairs[0].z > first.boundary_z and not first.pairs[0].decided
    assert record.stopped == "planned_n" and len(record.looks) == len(record.look_samples)


@pytest.mark.slow
def test_a_haybittle_peto_run_that_reaches_the_planned_n_has_the_fixed_verdict():
    """Whenever the sequential run goes to the end its last look is the fixed test itself: the
    same verdict (level and rule) as a fixed run on the same samples, for gains from none to
    clear; and a run that stopped early stopped with a firm verdict."""
    ended = 0
    for seed, gain in enumerate((0.0, 0.1, 0.2, 0.25, 0.3, 0.4, 0.6, 1.0) * 2):
        control, treatment = _arms(40, gain, seed=100 + seed)
        record = _run(control, treatment, 40)
        upto = {f"s{i:03d}" for i in range(record.looks[-1].samples)}
        seen = [o for o in control + treatment if o.sample_id in upto]
        at_stop = FAST.model_copy(update={"sequential_alpha": record.stop_alpha})
        verdict = analyze(seen, control="control", config=at_stop).verdict
        if record.looks[-1].samples == 40:  # ran to the end (stopped there: "efficacy" or "planned_n")
            ended += 1
            fixed = analyze(control + treatment, control="control", config=FAST).verdict
            assert (verdict.level, verdict.pairs[0].rule) == (fixed.level, fixed.pairs[0].rule)
        else:
            assert record.stopped == "efficacy" and verdict.level in (VerdictLevel.PROGRESS, VerdictLevel.REGRESS)
            assert record.stop_alpha == pytest.approx(0.001, rel=0.01)
    assert 4 <= ended < 16  # both kinds of run were checked
