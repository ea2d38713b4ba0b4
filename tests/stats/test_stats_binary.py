"""McNemar, Wilson (plain and clustered), Holm and gatekeeping against scipy / textbook values /
an independent sandwich computation."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from knowmeter.stats import gatekept, holm, mcnemar_exact, wilson_clustered, wilson_interval


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 10), (12, 12), (40, 61), (150, 190)])
def test_mcnemar_is_the_exact_binomial_test_of_discordant_pairs(b: int, c: int) -> None:
    pairs = [(True, False)] * b + [(False, True)] * c + [(True, True)] * 7 + [(False, False)] * 4
    result = mcnemar_exact(pairs)
    assert (result.control_only, result.treatment_only, result.both, result.neither) == (b, c, 7, 4)
    expected = ss.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    assert result.p_value == pytest.approx(expected, rel=1e-10)


def test_mcnemar_without_pairs_is_unknown() -> None:
    assert mcnemar_exact([]).p_value is None


def test_wilson_interval_textbook_values() -> None:
    # Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662; 15/148 -> 0.0624 to 0.1605.
    assert wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson_interval(15, 148) == pytest.approx((0.0624, 0.1605), abs=1e-4)
    low, high = wilson_interval(0, 10) or (None, None)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((1 - 0.2775, 1.0), abs=1e-4)
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def test_holm_step_down() -> None:
    # Holm (1979) style example: p = 0.01, 0.04, 0.03, 0.005 -> 0.03, 0.06, 0.06, 0.02.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.01, None, 0.5]) == [pytest.approx(0.02), None, pytest.approx(0.5)]
    assert holm([]) == [] and holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([0.9, 0.3]) == [pytest.approx(0.9), pytest.approx(0.6)]


def _sandwich_share_variance(y: np.ndarray, m: np.ndarray) -> float:
    """Independent reference: intercept-only OLS on the 0/1 trials with a CR1 cluster-robust
    variance, (X'X)^-1 (sum_g X_g' e_g e_g' X_g) (X'X)^-1 * G/(G-1) * (N-1)/(N-K)."""
    trials = np.concatenate([np.r_[np.ones(int(s)), np.zeros(int(t - s))] for s, t in zip(y, m, strict=True)])
    groups = np.repeat(np.arange(m.size), m.astype(int))
    x = np.ones((trials.size, 1))
    beta = np.linalg.lstsq(x, trials, rcond=None)[0]
    resid = trials - x @ beta
    bread = np.linalg.inv(x.T @ x)
    meat = sum(
        np.outer(x[groups == g].T @ resid[groups == g], x[groups == g].T @ resid[groups == g]) for g in range(m.size)
    )
    n, g, k = trials.size, m.size, 1
    return float((bread @ meat @ bread)[0, 0] * g / (g - 1) * (n - 1) / (n - k))


def _wilson_textbook(p: float, n: float, z: float) -> tuple[float, float]:
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_clustered_wilson_uses_the_cluster_robust_effective_n() -> None:
    rng = np.random.default_rng(5)
    m = rng.integers(1, 5, 40).astype(float)
    y = rng.binomial(m.astype(int), rng.beta(2, 2, 40)).astype(float)
    r = wilson_clustered(y, m, 0.9)
    assert r is not None and (r.successes, r.n, r.n_clusters) == (int(y.sum()), int(m.sum()), 40)
    p = y.sum() / m.sum()
    deff = _sandwich_share_variance(y, m) / (p * (1 - p) / m.sum())
    assert deff > 1 and r.design_effect == pytest.approx(deff, rel=1e-10)
    assert r.effective_n == pytest.approx(m.sum() / deff, rel=1e-10)
    assert (r.low, r.high) == pytest.approx(_wilson_textbook(p, m.sum() / deff, ss.norm.ppf(0.95)), rel=1e-10)


def test_clustered_wilson_covers_where_the_plain_one_does_not() -> None:
    # 30 samples x 3 repeats, strongly correlated repeats: the plain interval counts 90
    # independent trials and undercovers; the clustered one keeps its 95 %.
    rng = np.random.default_rng(11)
    covered = {"clustered": 0, "plain": 0}
    runs = 1000
    for _ in range(runs):
        p_i = rng.beta(0.6, 0.6, 30)  # true mean 0.5
        y = rng.binomial(3, p_i)
        r = wilson_clustered(y, np.full(30, 3))
        assert r is not None and r.low is not None and r.high is not None
        plain = wilson_interval(int(y.sum()), 90)
        assert plain is not None
        covered["clustered"] += r.low <= 0.5 <= r.high
        covered["plain"] += plain[0] <= 0.5 <= plain[1]
    assert covered["clustered"] / runs > 0.925
    assert covered["plain"] / runs < 0.85


def test_clustered_wilson_edge_cases() -> None:
    assert wilson_clustered([], []) is None and wilson_clustered([0], [0]) is None
    one_each = wilson_clustered([1, 0, 1, 1, 0], [1, 1, 1, 1, 1])
    assert one_each is not None and (one_each.low, one_each.high) == wilson_interval(3, 5)
    assert one_each.design_effect == 1.0
    all_pass = wilson_clustered([3, 3, 3], [3, 3, 3])
    assert all_pass is not None and (all_pass.low, all_pass.high) == wilson_interval(9, 9)
    single = wilson_clustered([2], [3])
    assert single is not None and single.rate == pytest.approx(2 / 3) and single.low is None
    with pytest.raises(ValueError):
        wilson_clustered([4], [3])
    with pytest.raises(ValueError):
        wilson_clustered([1, 2], [3])
    with pytest.raises(ValueError):
        wilson_clustered([np.nan], [3])


def test_gatekept_family_is_tested_only_behind_its_gate() -> None:
    layers = [0.01, 0.04, 0.2]
    assert gatekept(None, layers) == [None, None, None]
    # Holm within the family: 0.03, 0.08, 0.2; the gate's p bounds every adjusted p from below.
    assert gatekept(0.02, layers) == pytest.approx([0.03, 0.08, 0.2])
    assert gatekept(0.045, layers) == pytest.approx([0.045, 0.08, 0.2])
    assert gatekept(0.02, [0.01, None]) == [pytest.approx(0.02), None]
    # half the level (two treatments sharing alpha): Holm p doubled, capped at 1
    assert gatekept(0.001, [0.01, 0.3], weight=0.5) == pytest.approx([0.04, 0.6])
    assert gatekept(0.001, [0.01, 0.6], weight=0.5) == pytest.approx([0.04, 1.0])
    with pytest.raises(ValueError):
        gatekept(0.01, layers, weight=0)
