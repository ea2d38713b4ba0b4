"""Paired comparison: alignment and drops, statistics against scipy, hierarchical tests, McNemar, edge cases."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import orjson
import pytest
import scipy.stats as ss

from knowmeter.compare import Observation, compare_all, compare_pair
from knowmeter.stats import bootstrap_mean, sign_flip_test
from tests.compare.compare_factory import FAST, observations, shifted

LAYERS3 = ("fact", "behavior", "judge")


def _arms(n: int = 30, effect: float = 0.4, seed: int = 0) -> tuple[list[Observation], list[Observation]]:
    rng = np.random.default_rng(seed)
    control = {layer: rng.normal(3.8, 0.6, n) for layer in LAYERS3}
    treatment = {layer: shifted(v, effect, 0.5, seed + k) for k, (layer, v) in enumerate(control.items())}
    return observations("control", control), observations("treatment", treatment)


def test_metrics_agree_with_independent_references() -> None:
    control, treatment = _arms()
    pc = compare_pair(control, treatment, FAST)
    c = np.array([o.scores["composite"] for o in control], dtype=float)
    t = np.array([o.scores["composite"] for o in treatment], dtype=float)
    mc = pc.metrics["composite"]
    assert mc.n_pairs == 30 and mc.n_samples == 30 and mc.dropped.total == 0
    assert mc.diff.estimate == pytest.approx(float(np.mean(t - c)))
    assert mc.control_mean == pytest.approx(c.mean()) and mc.treatment_mean == pytest.approx(t.mean())
    ref = ss.bootstrap((t - c,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(1), vectorized=True)
    assert (mc.diff.bca.low, mc.diff.bca.high) == pytest.approx(tuple(ref.confidence_interval), abs=1e-12)
    assert (mc.diff.bca.b, mc.diff.bca.seed, mc.diff.bca.level) == (2000, 1, 0.95)
    assert mc.d_z is not None and mc.d_z * math.sqrt(30) == pytest.approx(ss.ttest_rel(t, c).statistic)
    assert mc.p_value == sign_flip_test(t - c, n_resamples=2000, seed=1).p_value
    assert mc.mde is not None and mc.n_needed is not None and mc.hedges_g_av is not None
    assert set(pc.metrics) == {"composite", *LAYERS3}
    assert [f.name for f in pc.families] == ["composite", "layers"]


def _holm(p: list[float]) -> list[float]:
    m = len(p)
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate([min(1.0, (m - rank) * p[i]) for rank, i in enumerate(order)])
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = float(steps[rank])
    return out


def test_the_composite_is_tested_first_at_full_alpha_then_its_layers() -> None:
    control, treatment = _arms(effect=0.4)
    pc = compare_pair(control, treatment, FAST)
    composite = pc.metrics["composite"]
    assert composite.significant and composite.p_adjusted == composite.p_value  # not shared with the layers
    raw = [pc.metrics[layer].p_value for layer in LAYERS3]
    expected = [max(composite.p_value, q) for q in _holm(raw)]  # type: ignore[arg-type, type-var]
    assert [pc.metrics[layer].p_adjusted for layer in LAYERS3] == pytest.approx(expected)
    assert {pc.metrics[layer].family for layer in LAYERS3} == {"layers"}
    assert pc.families[1].gate is not None and "composite is significant" in pc.families[1].gate


def test_a_judge_only_run_does_not_test_the_same_thing_twice() -> None:
    # composite == judge: the composite's p is not doubled by Holm over {composite, judge}
    # (p 0.038: Holm over {composite, judge} made it 0.076, not significant)
    rng = np.random.default_rng(12)
    base = rng.normal(3.8, 0.6, 30)
    control = observations("control", {"judge": base})
    treatment = observations("treatment", {"judge": shifted(base, 0.25, 0.6, 15)})
    pc = compare_pair(control, treatment, FAST)
    composite, judge = pc.metrics["composite"], pc.metrics["judge"]
    assert composite.p_value == judge.p_value and 0.025 < composite.p_value < 0.05  # type: ignore[operator]
    assert composite.p_adjusted == composite.p_value and judge.p_adjusted == composite.p_value
    assert composite.significant and judge.significant


def test_without_a_significant_composite_the_layers_are_a_safety_check() -> None:
    control, treatment = _arms(effect=0.0, seed=3)
    pc = compare_pair(control, treatment, FAST)
    assert pc.metrics["composite"].significant is False
    raw = [pc.metrics[layer].p_value for layer in LAYERS3]
    expected = [min(1.0, 2 * q) for q in _holm(raw)]  # type: ignore[arg-type]  # Holm at alpha / 2
    assert [pc.metrics[layer].p_adjusted for layer in LAYERS3] == pytest.approx(expected)
    assert {pc.metrics[layer].family for layer in LAYERS3} == {"layer_safety_check"}
    assert pc.families[1].level == pytest.approx(FAST.alpha / 2)
    assert pc.families[1].name == "layer_safety_check" and "never support PROGRESS" in (pc.families[1].gate or "")


def test_several_treatments_share_alpha_holm_on_composites_bonferroni_on_layers() -> None:
    control, treatment = _arms(effect=0.4, seed=3)
    _, other = _arms(effect=0.0, seed=3)
    other = [replace(o, variant="other") for o in other]
    both = compare_all(control, {"treatment": treatment, "other": other}, FAST)
    composites = [pc.metrics["composite"].p_value for pc in both]
    assert [pc.metrics["composite"].p_adjusted for pc in both] == pytest.approx(_holm(composites))  # type: ignore[arg-type]
    for pc in both:
        raw = [pc.metrics[layer].p_value for layer in LAYERS3]
        gate = pc.metrics["composite"]
        share = 2 if gate.significant else 4  # alpha / 2 treatments; the safety check at half that
        scaled = [min(1.0, share * q) for q in _holm(raw)]  # type: ignore[arg-type]
        expected = [max(gate.p_adjusted, q) for q in scaled] if gate.significant else scaled  # type: ignore[type-var]
        assert [pc.metrics[layer].p_adjusted for layer in LAYERS3] == pytest.approx(expected)
        assert pc.families[1].level == pytest.approx(FAST.alpha / share)
    assert both[0].metrics["composite"].significant and not both[1].metrics["composite"].significant
    single = compare_pair(control, treatment, FAST)
    assert single.metrics["composite"].p_value == both[0].metrics["composite"].p_value


def test_every_dropped_pair_is_counted_with_its_reason() -> None:
    control, treatment = _arms(n=10)
    control = control[:-1]  # s009 missing in the control
    treatment = [o for o in treatment if o.sample_id != "s008"]  # s008 missing in the treatment
    treatment[0] = replace(treatment[0], ok=False)  # s000 errored
    treatment[1] = replace(
        treatment[1], scores={**treatment[1].scores, "composite": math.nan, "fact": math.inf}
    )  # s001 NaN composite
    treatment[2] = replace(
        treatment[2], scores={**treatment[2].scores, "judge": None}, layers_used=("fact", "behavior")
    )  # s002 no judge
    pc = compare_pair(control, treatment, FAST)
    composite = pc.metrics["composite"].dropped
    assert (composite.missing_control, composite.missing_treatment, composite.error) == (1, 1, 1)
    assert (composite.non_finite, composite.layer_mismatch, composite.total) == (1, 1, 5)
    assert pc.metrics["composite"].n_pairs == 5
    assert pc.metrics["judge"].dropped.absent == 1 and pc.metrics["judge"].n_pairs == 6
    assert pc.metrics["fact"].dropped.non_finite == 1 and pc.metrics["fact"].diff.n_non_finite == 1
    assert pc.composite_comparable  # arm-level layer sets agree; one pair differed
    assert pc.comparability_note is not None and "1 pair(s)" in pc.comparability_note


def test_repeats_are_clustered_within_their_sample() -> None:
    rng = np.random.default_rng(2)
    per_sample = rng.normal(3.8, 0.6, (25, 1))
    control = {layer: np.repeat(per_sample, 3, axis=1) + rng.normal(0, 0.3, (25, 3)) for layer in LAYERS3}
    treatment = {layer: v + 0.3 + rng.normal(0, 0.3, (25, 3)) for layer, v in control.items()}
    pc = compare_pair(observations("control", control), observations("treatment", treatment), FAST)
    mc = pc.metrics["composite"]
    assert (mc.n_pairs, mc.n_samples) == (75, 25)
    diffs = np.mean([treatment[layer] - control[layer] for layer in LAYERS3], axis=0)
    labels = np.repeat([f"s{i:03d}" for i in range(25)], 3)
    expected = bootstrap_mean(diffs.ravel(), labels, b=2000, seed=1)
    assert (mc.diff.bca.low, mc.diff.bca.high) == pytest.approx(expected.bca)
    assert mc.permutation.n_permutations == 2000 and mc.permutation.method == "monte_carlo"
    assert pc.mcnemar is None
    assert pc.saturation is not None and [p.repeats for p in pc.saturation.points] == [1, 2, 3]


def test_a_zero_mean_difference_over_repeats_needs_no_n_and_the_report_can_store_it() -> None:
    """Three repeats whose differences sum to 0: the mean of the per-sample means is rounding
    residue (-5.6e-17), which asked for ~4e33 pairs and broke writing report.json (int64)."""
    control = {"s0": [2, 1, 5], "s1": [4, 1, 5], "s2": [1, 4, 2], "s3": [3, 3, 4]}
    treatment = {"s0": [5, 2, 2], "s1": [1, 2, 2], "s2": [3, 5, 3], "s3": [1, 5, 4]}
    arms = [
        Observation(sample_id=sample, repeat=r, variant=variant, scores={"composite": float(x), "fact": float(x)})
        for variant, scores in (("control", control), ("treatment", treatment))
        for sample, row in scores.items()
        for r, x in enumerate(row)
    ]
    pc = compare_pair(arms[:12], arms[12:], FAST)
    mc = pc.metrics["composite"]
    assert mc.diff.estimate == 0.0 and mc.sd_diff is not None and mc.sd_diff > 1
    assert mc.n_needed is None
    orjson.dumps(pc.model_dump(mode="json"))  # what report.json's writer does with it


def test_mcnemar_on_passed_matches_the_binomial_test() -> None:
    n = 40
    rng = np.random.default_rng(4)
    layers = {"fact": rng.normal(4, 0.5, n)}
    c_pass = rng.random(n) < 0.4
    t_pass = c_pass | (rng.random(n) < 0.5)
    t_pass[:3] = False
    obs_c = observations("control", layers, passed=c_pass)
    obs_t = observations("treatment", {"fact": layers["fact"] + 0.3}, passed=t_pass)
    pc = compare_pair(obs_c, obs_t, FAST)
    assert pc.mcnemar is not None
    b, c = int(np.sum(c_pass & ~t_pass)), int(np.sum(~c_pass & t_pass))
    assert (pc.mcnemar.control_only, pc.mcnemar.treatment_only) == (b, c)
    assert pc.mcnemar.p_value == pytest.approx(ss.binomtest(b, b + c).pvalue)
    assert pc.mcnemar.note is None


@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_inputs_give_unknowns_not_fake_numbers(n: int) -> None:
    control, treatment = _arms(n=max(n, 1))
    control, treatment = control[:n], treatment[:n]
    pc = compare_pair(control, treatment, FAST, control="control", treatment="treatment")
    if n == 0:
        assert pc.metrics == {}
        return
    mc = pc.metrics["composite"]
    assert mc.n_pairs == n
    if n == 1:
        assert mc.diff.percentile.low is None and mc.d_z is None and mc.mde is None and mc.sd_diff is None
        assert mc.p_value == 1.0 and mc.significant is False
    else:
        # Both differences positive: the exact sign-flip p is 2 / 2^2; far from significant.
        assert mc.diff.percentile.low is not None and mc.p_value == 0.5 and mc.significant is False
        assert mc.hedges_g_av is None and mc.d_z is not None
    assert "NaN" not in pc.model_dump_json()


def test_zero_variance_and_all_ties() -> None:
    same = observations("control", {layer: np.full(25, 4.0) for layer in LAYERS3})
    tied = observations("treatment", {layer: np.full(25, 4.0) for layer in LAYERS3})
    mc = compare_pair(same, tied, FAST).metrics["composite"]
    assert mc.diff.estimate == 0.0 and (mc.diff.bca.low, mc.diff.bca.high) == (0.0, 0.0)
    assert mc.p_value == 1.0 and mc.significant is False and mc.d_z is None and mc.mde == 0.0
    assert mc.n_needed is None  # no effect: no finite N detects it
    lifted = observations("treatment", {layer: np.full(25, 4.5) for layer in LAYERS3})
    up = compare_pair(same, lifted, FAST).metrics["composite"]
    assert up.diff.estimate == pytest.approx(0.5) and up.significant is True and up.direction == "up"


def test_variant_names_must_be_unambiguous() -> None:
    control, treatment = _arms(n=5)
    with pytest.raises(ValueError, match="control"):
        compare_pair(control + treatment, treatment, FAST)
