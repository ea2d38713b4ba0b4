"""Paired comparison: alignment and drops, statistics against scipy, Holm, McNemar, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as ss
from compare_factory import FAST, observations, shifted

from knowmeter.compare import Observation, compare_all, compare_pair
from knowmeter.stats import bootstrap_mean, sign_flip_test

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
    ref = ss.bootstrap((t - c,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(1),
                       vectorized=True)
    assert (mc.diff.bca.low, mc.diff.bca.high) == pytest.approx(tuple(ref.confidence_interval), abs=1e-12)
    assert (mc.diff.bca.b, mc.diff.bca.seed, mc.diff.bca.level) == (2000, 1, 0.95)
    assert mc.d_z is not None and mc.d_z * math.sqrt(30) == pytest.approx(ss.ttest_rel(t, c).statistic)
    assert mc.p_value == sign_flip_test(t - c, n_resamples=2000, seed=1).p_value
    assert mc.mde is not None and mc.n_needed is not None and mc.hedges_g_av is not None
    assert set(pc.metrics) == {"composite", *LAYERS3}
    assert pc.holm_family_size == 4


def test_holm_runs_across_treatments_and_layers() -> None:
    control, treatment = _arms(effect=0.2, seed=3)
    _, other = _arms(effect=0.0, seed=3)
    other = [o.model_copy(update={"variant": "other"}) for o in other]
    both = compare_all(control, {"treatment": treatment, "other": other}, FAST)
    raw = [mc.p_value for pc in both for mc in pc.metrics.values()]
    adjusted = [mc.p_adjusted for pc in both for mc in pc.metrics.values()]
    m = len(raw)
    order = np.argsort(raw, kind="stable")
    expected = np.maximum.accumulate([min(1.0, (m - rank) * raw[i]) for rank, i in enumerate(order)])  # type: ignore[operator]
    assert [adjusted[i] for i in order] == pytest.approx(list(expected))
    assert all(pc.holm_family_size == 8 for pc in both)
    single = compare_pair(control, treatment, FAST)
    assert single.metrics["composite"].p_value == both[0].metrics["composite"].p_value
    assert single.holm_family_size == 4


def test_every_dropped_pair_is_counted_with_its_reason() -> None:
    control, treatment = _arms(n=10)
    control = control[:-1]  # s009 missing in the control
    treatment = [o for o in treatment if o.sample_id != "s008"]  # s008 missing in the treatment
    treatment[0] = treatment[0].model_copy(update={"ok": False})  # s000 errored
    treatment[1] = treatment[1].model_copy(update={"scores": {**treatment[1].scores, "composite": math.nan,
                                                              "fact": math.inf}})  # s001 NaN composite
    treatment[2] = treatment[2].model_copy(update={"scores": {**treatment[2].scores, "judge": None},
                                                   "layers_used": ("fact", "behavior")})  # s002 no judge
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
