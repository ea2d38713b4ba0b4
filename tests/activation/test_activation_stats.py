"""The activation figures, the paired A/B changes and the verdict against independent references:
scipy's binomial test (McNemar), textbook Wilson values, F1 computed by hand, and a hand-made
cluster bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from knowmeter.activation import Trial, arm_figures, compare_arms, split_cases, verdict
from knowmeter.stats import wilson_interval


def _trials(spec: dict[str, tuple[bool, list[bool]]]) -> list[Trial]:
    """``{case: (should_trigger, [activated per repeat])}`` → trials."""
    return [
        Trial(case, r, should, fired, ("s",) if fired else (), "skill-tool" if fired else None)
        for case, (should, fires) in spec.items()
        for r, fired in enumerate(fires)
    ]


def test_one_repeat_gives_the_plain_wilson_interval_and_hand_computed_figures() -> None:
    # 8 positives, 6 fired; 5 negatives, 1 fired: TP 6, FN 2, FP 1
    spec = {f"p{i}": (True, [i < 6]) for i in range(8)} | {f"n{i}": (False, [i == 0]) for i in range(5)}
    f = arm_figures("A", "s", _trials(spec), b=2000, seed=1)
    assert (f.recall.successes, f.recall.trials, f.recall.rate) == (6, 8, 0.75)
    assert (f.recall.low, f.recall.high) == pytest.approx(wilson_interval(6, 8))
    assert (f.false_activation_rate.successes, f.false_activation_rate.trials) == (1, 5)
    assert (f.false_activation_rate.low, f.false_activation_rate.high) == pytest.approx(wilson_interval(1, 5))
    assert f.precision.rate == pytest.approx(6 / 7)
    assert f.f1 == pytest.approx(2 * 6 / (2 * 6 + 1 + 2))
    assert f.f1 is not None and f.f1_low is not None and f.f1_high is not None
    assert f.f1_low <= f.f1 <= f.f1_high
    assert [c.case_id for c in f.confusion] == ["n0", "p6", "p7"]


def test_wilson_textbook_value_through_the_figures() -> None:
    # Newcombe (1998): 81/263 → (0.2553, 0.3662)
    spec = {f"p{i}": (True, [i < 81]) for i in range(263)}
    f = arm_figures("A", "s", _trials(spec), b=200)
    assert (f.recall.low, f.recall.high) == pytest.approx((0.2553, 0.3662), abs=1e-4)


def test_repeats_are_clustered_by_case() -> None:
    # each case answers the same way 3 times: 9/12 trials, but only 4 independent cases
    spec = {"p1": (True, [True] * 3), "p2": (True, [True] * 3), "p3": (True, [True] * 3), "p4": (True, [False] * 3)}
    f = arm_figures("A", "s", _trials(spec), b=200)
    naive = wilson_interval(9, 12)
    # CR1 sandwich: G/(G-1) · Σ(y_i − p·m_i)² / N² = 4/3 · 6.75 / 144 over p(1−p)/N = 0.1875/12 → 4
    assert f.recall.design_effect == pytest.approx(4.0) and f.recall.cases == 4
    assert f.recall.low is not None and naive is not None and f.recall.low < naive[0]


def test_failed_tasks_are_left_out_and_counted_and_unknown_is_none() -> None:
    trials = [Trial("p1", 0, True, None, error="boom"), Trial("p1", 1, True, True, ("s",), "read")]
    f = arm_figures("A", "s", trials, b=200)
    assert (f.errors, f.recall.trials) == (1, 1)
    assert f.false_activation_rate.rate is None and f.false_activation_rate.trials == 0
    assert f.confusion[0].errors == 1


def test_routing_top1_counts_the_first_loaded_skill() -> None:
    trials = [
        Trial("r1", 0, True, True, ("s", "d"), "skill-tool", "s"),
        Trial("r1", 1, True, True, ("d", "s"), "skill-tool", "s"),
        Trial("r2", 0, False, False, ("d",), None, "d"),
        Trial("r2", 1, False, False, (), None, "d"),
    ]
    f = arm_figures("A", "s", trials, b=200)
    assert f.routing_top1 is not None and (f.routing_top1.successes, f.routing_top1.trials) == (2, 4)
    # r1 fired every time but lost top-1 once to d; r2 never fired and once loaded nothing at all
    assert [(c.case_id, c.top1_misses, c.loaded_instead) for c in f.confusion] == [("r1", 1, ["d"]), ("r2", 1, ["d"])]


def _ab(n_pos: int, n_neg: int, a_fires: list[bool], b_fires: list[bool], neg_a: bool, neg_b: bool, reps: int = 2):
    a = {f"p{i}": (True, [a_fires[i]] * reps) for i in range(n_pos)} | {
        f"n{i}": (False, [neg_a] * reps) for i in range(n_neg)
    }
    b = {f"p{i}": (True, [b_fires[i]] * reps) for i in range(n_pos)} | {
        f"n{i}": (False, [neg_b] * reps) for i in range(n_neg)
    }
    return compare_arms("all", "s", ("A", _trials(a)), ("B", _trials(b)), b=2000, seed=3)


def test_mcnemar_and_bootstrap_of_the_paired_recall_change() -> None:
    a_fires = [False] * 8 + [True] * 4
    b_fires = [True] * 12
    comp = _ab(12, 10, a_fires, b_fires, False, False)
    recall, false_act = comp.changes
    assert (recall.control_only, recall.treatment_only, recall.pairs, recall.cases) == (0, 16, 24, 12)
    assert recall.mcnemar_p == pytest.approx(ss.binomtest(0, 16, 0.5).pvalue)
    assert recall.difference == pytest.approx(8 / 12)
    # an independent cluster bootstrap: resample the 12 cases with numpy's generator, seed 3
    diffs = np.array([1.0] * 8 + [0.0] * 4)
    idx = np.random.default_rng(3).integers(0, 12, (2000, 12))
    lo, hi = np.quantile(diffs[idx].mean(axis=1), [0.025, 0.975])
    assert (recall.low, recall.high) == pytest.approx((lo, hi))
    assert recall.significant and not false_act.significant
    assert verdict(comp)[0] == "PROGRESS" and verdict(comp)[2] == 0


def test_false_activations_rising_is_regress_even_when_recall_rises() -> None:
    comp = _ab(12, 10, [False] * 8 + [True] * 4, [True] * 12, False, True)
    level, reasons, code = verdict(comp)
    assert level == "REGRESS" and code == 1 and reasons[1].startswith("false activations +100.0 pts")


def test_no_change_is_noise_with_enough_cases_and_underpowered_without() -> None:
    same = [True, False] * 6
    assert verdict(_ab(12, 10, same, same, False, False))[0] == "NOISE"
    level, reasons, _ = verdict(_ab(2, 2, [True, False], [True, False], False, False))
    assert level == "UNDERPOWERED" and any("fewer than 5" in r for r in reasons)


def test_recall_rise_without_negative_cases_is_not_progress() -> None:
    comp = _ab(12, 0, [False] * 8 + [True] * 4, [True] * 12, False, False)
    assert verdict(comp)[0] == "UNDERPOWERED"


def test_a_significant_gain_on_too_few_cases_is_underpowered() -> None:
    # 3 cases, each fired by B only: the bootstrap interval is [1, 1], but 3 cases prove little
    comp = _ab(3, 6, [False] * 3, [True] * 3, False, False)
    assert comp.changes[0].significant
    level, reasons, code = verdict(comp)
    assert (level, code) == ("UNDERPOWERED", 1) and "should-trigger: 3 case(s) (fewer than 5)" in reasons


def test_split_is_stratified_seeded_and_disjoint() -> None:
    cases = {f"p{i}": True for i in range(10)} | {f"n{i}": False for i in range(5)}
    split = split_cases(cases, seed=7)
    assert split == split_cases(cases, seed=7) and split != split_cases(cases, seed=8)
    assert sum(c.startswith("p") for c in split["tune"]) == 6 and sum(c.startswith("n") for c in split["tune"]) == 3
    assert not set(split["tune"]) & set(split["held-out"]) and len(split["tune"] + split["held-out"]) == 15


def test_all_trials_agreeing_uses_the_cases_as_n_not_the_repeats() -> None:
    # 6 cases × 3 repeats, never fired: the repeats may be copies of one another, so n = 6 cases
    f = arm_figures("A", "s", _trials({f"n{i}": (False, [False] * 3) for i in range(6)}), b=200)
    rate = f.false_activation_rate
    assert (rate.successes, rate.trials, rate.cases, rate.design_effect) == (0, 18, 6, 3.0)
    assert (rate.low, rate.high) == pytest.approx(wilson_interval(0, 6))
    one = arm_figures("A", "s", _trials({f"p{i}": (True, [True] * 2) for i in range(5)}), b=200).recall
    assert (one.low, one.high) == pytest.approx(wilson_interval(5, 5))
