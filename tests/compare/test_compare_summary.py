"""Per-variant summaries: CIs, pass rate, layer sets, stability, judge agreement, NaN handling."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
import scipy.stats as ss
from compare_factory import FAST, observations

from knowmeter.compare import Observation, summarize_variant
from knowmeter.stats import bootstrap_mean, wilson_interval


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
    no_assertions = observations("v", {"judge": np.full(5, 4.0)})
    assert summarize_variant("v", no_assertions, FAST).pass_rate is None


def test_errors_nan_and_absent_layers_are_counted_not_averaged() -> None:
    obs = observations("v", {"fact": np.array([4.0, 3.0, 5.0, 2.0]), "judge": np.array([4.0, 4.0, 4.0, 4.0])})
    obs[1] = obs[1].model_copy(update={"ok": False})
    obs[2] = obs[2].model_copy(update={"scores": {"composite": np.nan, "fact": np.nan, "judge": 4.0}})
    obs[3] = obs[3].model_copy(update={"scores": {"composite": 4.0, "fact": None, "judge": 4.0},
                                       "layers_used": ("judge",)})
    obs.append(obs[0])  # a duplicate result: the later one counts once
    summary = summarize_variant("v", obs, FAST)
    assert (summary.n_results, summary.n_errors, summary.n_duplicates) == (4, 1, 1)
    assert summary.metrics["fact"].estimate == 4.0 and summary.metrics["fact"].n == 1
    assert summary.metrics["fact"].n_non_finite == 1
    assert summary.metrics["composite"].n_non_finite == 1 and summary.n_scored == 2
    assert summary.layer_sets == {"fact+judge": 2, "judge": 1}


def test_repeat_stability_is_the_per_sample_cv() -> None:
    values = np.array([[4.0, 5.0, 6.0], [2.0, 2.0, 2.0], [3.0, 3.3, 2.7]])
    summary = summarize_variant("v", observations("v", {"judge": values}), FAST)
    st = summary.stability
    assert st is not None and st.n_samples == 3
    assert st.per_sample_cv == pytest.approx({"s000": 0.2, "s001": 0.0, "s002": 0.1})
    assert st.median_cv == pytest.approx(0.1) and st.max_cv == pytest.approx(0.2) and st.stable is True
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
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    assert ja.min_pearson == min(p.pearson for p in ja.pairs if p.pearson is not None)
    assert ja.dissent is True  # judge c is noise


def test_single_judge_has_no_agreement_and_other_variants_are_ignored() -> None:
    obs = observations("v", {"judge": np.full(4, 4.0)}, judges={"only": np.full(4, 4.0)})
    other = [Observation(sample_id="x", variant="w", scores={"composite": 1.0})]
    summary = summarize_variant("v", obs + other, FAST)
    assert summary.judge_agreement is None and summary.n_results == 4
    empty = summarize_variant("nothing", [], FAST)
    assert (empty.n_results, empty.metrics, empty.pass_rate, empty.saturation) == (0, {}, None, None)
