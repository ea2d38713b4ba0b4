"""Per-variant summaries: CIs, pass rate, layer sets, stability, judge agreement, NaN handling."""

from __future__ import annotations

from dataclasses import replace

import krippendorff
import numpy as np
import pytest
import scipy.stats as ss

from knowmeter.compare import Observation, summarize_variant
from knowmeter.stats import bootstrap_mean, wilson_clustered, wilson_interval
from tests.compare.compare_factory import FAST, observations


def test_layer_means_have_seeded_cluster_bootstrap_cis() -> None:
    rng = np.random.default_rng(0)
    fact = rng.normal(3.9, 0.5, (20, 2))
    obs = observations("v", {"fact": fact, "judge": fact + 0.2})
    summary = summarize_variant("v", obs, FAST)
    labels = np.repeat([f"s{i:03d}" for i in range(20)], 2)
    expected = bootstrap_mean(fact.ravel(), labels, b=2000, seed=1)
    got = summary.metrics["fact"]
    assert got.estimate == pytest.approx(expected.estimate)
    assert (got.percentile.low, got.percentile.high) == pytest.approx(expected.percentile)
    assert (got.n, got.n_samples) == (40, 20)
    assert set(summary.metrics) == {"composite", "fact", "judge"}
    assert (summary.n_results, summary.n_samples, summary.repeats) == (40, 20, 2)
    assert summary.layer_sets == {"fact+judge": 40}


def test_pass_rate_uses_wilson() -> None:
    passed = np.array([True] * 13 + [False] * 7)
    obs = observations("v", {"fact": np.full(20, 4.0)}, passed=passed)
    rate = summarize_variant("v", obs, FAST).pass_rate
    assert rate is not None and (rate.passed, rate.n, rate.rate) == (13, 20, 0.65)
    assert (rate.low, rate.high) == pytest.approx(wilson_interval(13, 20))
    assert (rate.method, rate.design_effect) == ("wilson", 1.0)


def test_pass_rate_with_repeats_is_clustered_by_sample() -> None:
    # 10 samples x 3 repeats, each sample always passing or always failing: 30 results carry the
    # information of 10, so the interval must be the 10-sample one, not the 30-result one.
    passed = np.repeat(np.array([True] * 6 + [False] * 4)[:, None], 3, axis=1)
    obs = observations("v", {"fact": np.full((10, 3), 4.0)}, passed=passed)
    rate = summarize_variant("v", obs, FAST).pass_rate
    assert rate is not None and (rate.passed, rate.n, rate.n_samples, rate.method) == (18, 30, 10, "wilson_clustered")
    assert rate.design_effect == pytest.approx(3 * 10 / 9)  # deff = m * G / (G - 1) for perfectly correlated repeats
    ref = wilson_clustered([3] * 6 + [0] * 4, [3] * 10)
    assert ref is not None and (rate.low, rate.high) == pytest.approx((ref.low, ref.high))
    naive = wilson_interval(18, 30)
    assert naive is not None and rate.low is not None and rate.high is not None
    assert rate.high - rate.low > 1.5 * (naive[1] - naive[0])
    no_assertions = observations("v", {"judge": np.full(5, 4.0)})
    assert summarize_variant("v", no_assertions, FAST).pass_rate is None


def test_errors_nan_and_absent_layers_are_counted_not_averaged() -> None:
    obs = observations("v", {"fact": np.array([4.0, 3.0, 5.0, 2.0]), "judge": np.array([4.0, 4.0, 4.0, 4.0])})
    obs[1] = replace(obs[1], ok=False)
    obs[2] = replace(obs[2], scores={"composite": np.nan, "fact": np.nan, "judge": 4.0})
    obs[3] = replace(obs[3], scores={"composite": 4.0, "fact": None, "judge": 4.0}, layers_used=("judge",))
    obs.append(obs[0])  # a duplicate result: the later one counts once
    summary = summarize_variant("v", obs, FAST)
    assert (summary.n_results, summary.n_errors, summary.n_duplicates) == (4, 1, 1)
    assert summary.metrics["fact"].estimate == 4.0 and summary.metrics["fact"].n == 1
    assert summary.metrics["fact"].n_non_finite == 1
    assert summary.metrics["composite"].n_non_finite == 1 and summary.n_scored == 2
    assert summary.layer_sets == {"fact+judge": 2, "judge": 1}


def test_repeat_stability_is_the_share_of_variance_between_repeats() -> None:
    values = np.array([[4.0, 5.0, 6.0], [2.0, 2.0, 2.0], [3.0, 3.3, 2.7]])
    summary = summarize_variant("v", observations("v", {"judge": values}), FAST)
    st = summary.stability
    assert st is not None and (st.n_samples, st.n) == (3, 9)
    assert st.per_sample_sd == pytest.approx({"s000": 1.0, "s001": 0.0, "s002": 0.3})
    # one-way ANOVA: MS_between = 3 * var(means 5, 2, 3) = 7, MS_within = (2 + 0 + 0.18) / 6
    ms_w = 2.18 / 6
    icc = (7 - ms_w) / (7 + 2 * ms_w)
    assert st.icc == pytest.approx(icc) and st.repeat_share == pytest.approx(1 - icc) and st.stable is True
    noisy = summarize_variant("v", observations("v", {"judge": np.array([[1.0, 5.0], [5.0, 1.0], [3.0, 3.5]])}), FAST)
    assert noisy.stability is not None and noisy.stability.stable is False  # mostly run-to-run noise
    single = summarize_variant("v", observations("v", {"judge": values[:, 0]}), FAST)
    assert single.stability is None and single.saturation is not None and single.saturation.saturated is None


def test_judge_agreement_against_scipy_and_krippendorff() -> None:
    rng = np.random.default_rng(3)
    truth = rng.normal(3.5, 1.0, 50)
    judges = {"a": truth + rng.normal(0, 0.3, 50), "b": truth + rng.normal(0, 0.6, 50), "c": rng.normal(3, 1, 50)}
    judges["c"][:5] = np.nan
    obs = observations("v", {"judge": truth}, judges=judges)
    ja = summarize_variant("v", obs, FAST).judge_agreement
    assert ja is not None and ja.judges == ["a", "b", "c"]
    ab = next(p for p in ja.pairs if (p.judge_a, p.judge_b) == ("a", "b"))
    assert ab.pearson == pytest.approx(ss.pearsonr(judges["a"], judges["b"]).statistic)
    assert ab.mean_abs_diff == pytest.approx(np.mean(np.abs(judges["a"] - judges["b"])))
    ac = next(p for p in ja.pairs if (p.judge_a, p.judge_b) == ("a", "c"))
    assert ac.n == 45
    data = np.vstack([judges["a"], judges["b"], judges["c"]])
    assert ja.krippendorff_alpha_interval == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    )
    assert ja.min_pearson == min(p.pearson for p in ja.pairs if p.pearson is not None)
    assert ja.dissent is True  # judge c is noise


def test_single_judge_has_no_agreement_and_other_variants_are_ignored() -> None:
    obs = observations("v", {"judge": np.full(4, 4.0)}, judges={"only": np.full(4, 4.0)})
    other = [Observation(sample_id="x", variant="w", scores={"composite": 1.0})]
    summary = summarize_variant("v", obs + other, FAST)
    assert summary.judge_agreement is None and summary.n_results == 4
    empty = summarize_variant("nothing", [], FAST)
    assert (empty.n_results, empty.metrics, empty.pass_rate, empty.saturation) == (0, {}, None, None)
