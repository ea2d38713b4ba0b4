"""Rater agreement against the krippendorff package, scipy and a worked κ example."""

from __future__ import annotations

from typing import Literal

import krippendorff
import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st

from knowmeter.stats import (
    krippendorff_alpha,
    krippendorff_alpha_bootstrap,
    mean_abs_diff,
    pearson,
    repeat_variance,
    weighted_kappa,
)


def _ratings(seed: int, raters: int, units: int, missing: float, continuous: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, units).astype(float)
    noise = rng.normal(0, 0.8, (raters, units))
    data = truth + noise if continuous else np.clip(np.rint(truth + noise), 1, 5)
    data[rng.random(data.shape) < missing] = np.nan
    return data


@pytest.mark.parametrize("level", ["interval", "ordinal"])
@pytest.mark.parametrize(
    ("seed", "raters", "units", "missing"), [(1, 2, 10, 0.0), (2, 3, 40, 0.2), (3, 5, 25, 0.4), (4, 2, 200, 0.1)]
)
def test_alpha_matches_the_krippendorff_package(
    level: Literal["interval", "ordinal"], seed: int, raters: int, units: int, missing: float
) -> None:
    data = _ratings(seed, raters, units, missing, continuous=False)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-12)


def test_interval_alpha_on_continuous_scores_matches_the_package() -> None:
    data = _ratings(7, 3, 60, 0.15, continuous=True)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert krippendorff_alpha(data) == pytest.approx(expected, abs=1e-12)


def test_alpha_is_none_when_undefined_and_one_for_perfect_agreement() -> None:
    assert krippendorff_alpha(np.full((2, 5), 3.0)) is None  # no variation at all
    assert krippendorff_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]])) is None  # nothing pairable
    perfect = np.array([[1.0, 2.0, 3.0, 5.0], [1.0, 2.0, 3.0, 5.0]])
    assert krippendorff_alpha(perfect) == pytest.approx(1.0)
    assert krippendorff_alpha(perfect, "ordinal") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(perfect, "nominal")  # type: ignore[arg-type]


def test_alpha_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    data = _ratings(5, 2, 80, 0.0, continuous=True)
    first = krippendorff_alpha_bootstrap(data, b=2000, seed=3)
    assert first == krippendorff_alpha_bootstrap(data, b=2000, seed=3)
    assert first.estimate == pytest.approx(krippendorff_alpha(data))
    assert first.estimate is not None and first.percentile is not None and first.bca is not None
    assert first.percentile[0] < first.estimate < first.percentile[1]
    assert first.n_clusters == 80
    # Units are resampled: the CI agrees with a naive loop over resampled units.
    idx = np.random.default_rng(3).integers(0, 80, (2000, 80))
    naive = np.array([krippendorff_alpha(data[:, row]) for row in idx[:300]])
    assert np.std(naive) == pytest.approx(first.standard_error, rel=0.15)


def test_weighted_kappa_worked_example() -> None:
    # Ratings a = (1, 2, 3, 3), b = (1, 3, 3, 2). Quadratic weights w = (i - j)^2.
    # Observed: pairs (1,1) (2,3) (3,3) (3,2) -> mean w = (0 + 1 + 0 + 1) / 4 = 0.5.
    # Both marginals are (1/4, 1/4, 1/2) over (1, 2, 3): E[w] = 2 Var = 2 (5.75 - 2.25^2) = 1.375.
    # kappa = 1 - 0.5 / 1.375 = 7 / 11.
    assert weighted_kappa([1, 2, 3, 3], [1, 3, 3, 2]) == pytest.approx(7 / 11, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=2, max_size=40))
def test_weighted_kappa_equals_schuster_moment_identity(pairs: list[tuple[int, int]]) -> None:
    """Quadratic κ = 2 cov / (var_a + var_b + (mean_a - mean_b)^2) (Schuster 2004)."""
    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    denom = a.var() + b.var() + (a.mean() - b.mean()) ** 2
    kappa = weighted_kappa(a, b)
    if denom == 0:
        assert kappa is None
    else:
        assert kappa == pytest.approx(2 * np.mean((a - a.mean()) * (b - b.mean())) / denom, abs=1e-12)


def test_weighted_kappa_uses_declared_categories_and_rejects_strangers() -> None:
    assert weighted_kappa([1, 5], [1, 5], categories=[1, 2, 3, 4, 5]) == pytest.approx(1.0)
    assert weighted_kappa([], []) is None
    assert weighted_kappa([3, 3], [3, 3]) is None
    with pytest.raises(ValueError, match="categories"):
        weighted_kappa([1, 6], [1, 2], categories=[1, 2, 3])


def test_pearson_and_mean_abs_diff_drop_incomplete_pairs() -> None:
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=50), rng.normal(size=50)
    assert pearson(x, y) == pytest.approx(ss.pearsonr(x, y).statistic, abs=1e-12)
    x[3], y[10] = np.nan, np.nan
    keep = np.isfinite(x) & np.isfinite(y)
    assert pearson(x, y) == pytest.approx(ss.pearsonr(x[keep], y[keep]).statistic, abs=1e-12)
    assert mean_abs_diff(x, y) == pytest.approx(np.mean(np.abs(x[keep] - y[keep])))
    assert pearson([1.0], [2.0]) is None and pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None
    assert mean_abs_diff([np.nan], [1.0]) is None


def test_repeat_icc_matches_shrout_and_fleiss() -> None:
    # Shrout & Fleiss (1979), Table 2: 6 targets x 4 ratings; BMS 11.24, WMS 6.26, ICC(1,1) = .17.
    data = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
    r = repeat_variance(data.ravel(), np.repeat(np.arange(6), 4))
    assert r is not None
    assert (r.ms_between, r.ms_within) == pytest.approx((11.2417, 6.2639), abs=1e-4)
    assert r.icc is not None
    assert r.icc == pytest.approx(0.1657, abs=1e-4) and r.repeat_share == pytest.approx(1 - r.icc)
    assert (r.n_samples, r.n) == (6, 24)


def test_repeat_icc_unbalanced_groups_agree_with_scipy_anova() -> None:
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 5, 30)
    labels = np.repeat(np.arange(30), sizes)
    values = np.repeat(rng.normal(0, 1.0, 30), sizes) + rng.normal(0, 0.5, labels.size)
    values[[0, 7]] = np.nan  # excluded, never averaged in
    keep = np.isfinite(values)
    r = repeat_variance(values, labels)
    assert r is not None
    groups = [values[keep & (labels == g)] for g in range(30)]
    groups = [g for g in groups if g.size]
    assert r.ms_between / r.ms_within == pytest.approx(ss.f_oneway(*groups).statistic, rel=1e-10)
    n, g = sum(x.size for x in groups), len(groups)
    k0 = (n - sum(x.size**2 for x in groups) / n) / (g - 1)
    expected = (r.ms_between - r.ms_within) / (r.ms_between + (k0 - 1) * r.ms_within)
    assert r.icc is not None and r.icc == pytest.approx(expected, rel=1e-10) and 0.6 < r.icc < 0.9


def test_repeat_icc_edge_cases() -> None:
    assert repeat_variance([], []) is None
    assert repeat_variance([3.0], ["a"]) is None  # n = 1
    assert repeat_variance([3.0, 4.0], ["a", "b"]) is None  # no sample has two repeats
    assert repeat_variance([3.0, 4.0, 5.0], ["a", "a", "a"]) is None  # a single sample
    assert repeat_variance([np.nan, np.nan, 1.0, 2.0], ["a", "a", "b", "c"]) is None
    flat = repeat_variance([3.0] * 6, ["a", "a", "b", "b", "c", "c"])
    assert flat is not None and flat.icc is None and flat.repeat_share is None  # no variance: unknown
    deterministic = repeat_variance([1.0, 1.0, 4.0, 4.0], ["a", "a", "b", "b"])
    assert deterministic is not None and (deterministic.icc, deterministic.repeat_share) == (1.0, 0.0)
    noise_only = repeat_variance([1.0, 5.0, 5.0, 1.0], ["a", "a", "b", "b"])  # MS_between < MS_within
    assert noise_only is not None and (noise_only.icc, noise_only.repeat_share) == (0.0, 1.0)
    with pytest.raises(ValueError, match="label"):
        repeat_variance([1.0, 2.0], ["a"])
