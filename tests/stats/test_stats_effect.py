"""Effect sizes, MDE and N needed against scipy and a published worked example."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

from knowmeter.stats import (
    cohen_dz,
    hedges_correction,
    hedges_g_av,
    minimum_detectable_effect,
    n_for_effect,
    norm_ppf,
    t_ppf,
)
from knowmeter.stats._effect import NEGLIGIBLE_EFFECT_RTOL

# Lakens (2013), "Calculating and reporting effect sizes", Table 1: two movies rated by 10 people.
MOVIE_1 = np.array([9, 7, 8, 9, 8, 9, 9, 10, 9, 9], dtype=float)
MOVIE_2 = np.array([9, 6, 7, 8, 7, 9, 8, 8, 8, 7], dtype=float)


def test_dz_reproduces_the_paired_t_statistic() -> None:
    rng = np.random.default_rng(1)
    c = rng.normal(3, 1, 35)
    t = c + rng.normal(0.3, 0.8, 35)
    dz = cohen_dz(t - c)
    assert dz is not None
    assert dz * math.sqrt(35) == pytest.approx(ss.ttest_rel(t, c).statistic, rel=1e-12)


def test_lakens_worked_example() -> None:
    assert cohen_dz(MOVIE_1 - MOVIE_2) == pytest.approx(1.50, abs=0.005)
    # d_av = 1.13 in the paper; g_av applies the exact correction with df = n - 1 = 9.
    j = hedges_correction(9)
    assert j is not None
    assert hedges_g_av(MOVIE_2, MOVIE_1) == pytest.approx(1.1287 * j, abs=1e-3)
    assert hedges_g_av(MOVIE_1, MOVIE_2) == pytest.approx(-1.1287 * j, abs=1e-3)


@pytest.mark.parametrize("df", [2, 3, 9, 30, 200])
def test_hedges_correction_is_the_exact_gamma_ratio(df: int) -> None:
    exact = sp.gamma(df / 2) / (math.sqrt(df / 2) * sp.gamma((df - 1) / 2))
    assert hedges_correction(df) == pytest.approx(exact, rel=1e-12)
    if df >= 9:
        assert hedges_correction(df) == pytest.approx(1 - 3 / (4 * df - 1), abs=1e-3)


def test_undefined_effect_sizes_are_none() -> None:
    assert cohen_dz([]) is None and cohen_dz([1.0]) is None
    assert cohen_dz([0.5, 0.5, 0.5]) is None  # zero spread: d_z undefined, not infinite
    assert hedges_correction(1) is None
    assert hedges_g_av([1.0, 2.0], [2.0, 3.0]) is None  # n = 2: J(1) = 0
    assert hedges_g_av([3.0, 3.0, 3.0], [4.0, 4.0, 4.0]) is None
    assert cohen_dz([1.0, np.nan, 2.0, 4.0]) == pytest.approx(cohen_dz([1.0, 2.0, 4.0]))


@pytest.mark.parametrize("p", [0.6, 0.8, 0.975, 0.995])
@pytest.mark.parametrize("df", [1, 2, 5, 19, 120, 5000, 2_000_000])
def test_t_quantile_matches_scipy(p: float, df: int) -> None:
    assert t_ppf(p, df) == pytest.approx(ss.t.ppf(p, df), rel=1e-9)
    assert t_ppf(1 - p, df) == pytest.approx(ss.t.ppf(1 - p, df), rel=1e-9)


@pytest.mark.parametrize("p", [1e-12, 1e-4, 0.02, 0.5, 0.8, 0.975, 1 - 1e-9])
def test_normal_quantile_matches_scipy(p: float) -> None:
    assert norm_ppf(p) == pytest.approx(ss.norm.ppf(p), rel=1e-9, abs=1e-12)


def _exact_power(effect: float, sd: float, n: int, alpha: float = 0.05) -> float:
    df, nc = n - 1, effect / sd * math.sqrt(n)
    crit = ss.t.ppf(1 - alpha / 2, df)
    return float(ss.nct.sf(crit, df, nc) + ss.nct.cdf(-crit, df, nc))


@pytest.mark.parametrize("n", [10, 20, 50, 400])
def test_mde_has_eighty_percent_power_by_the_noncentral_t(n: int) -> None:
    mde = minimum_detectable_effect(0.9, n)
    assert mde is not None
    assert _exact_power(mde, 0.9, n) == pytest.approx(0.80, abs=0.01)


@pytest.mark.parametrize(("effect", "sd"), [(0.5, 1.0), (0.2, 0.8), (0.05, 0.7), (1.5, 1.0)])
def test_n_needed_is_the_smallest_sufficient_n(effect: float, sd: float) -> None:
    n = n_for_effect(effect, sd)
    assert n is not None
    mde_n, mde_before = minimum_detectable_effect(sd, n), minimum_detectable_effect(sd, n - 1)
    assert mde_n is not None and mde_n <= effect
    assert n == 2 or (mde_before is not None and mde_before > effect)
    assert n_for_effect(-effect, sd) == n


def test_power_helpers_return_none_when_undefined() -> None:
    assert minimum_detectable_effect(1.0, 1) is None
    assert minimum_detectable_effect(None, 30) is None
    assert minimum_detectable_effect(0.0, 30) == 0.0
    assert n_for_effect(0.0, 1.0) is None and n_for_effect(None, 1.0) is None
    assert n_for_effect(0.3, 0.0) == 2
    # 0.8 SD effect at 80 % power, alpha 0.05: the classic ~15 pairs.
    assert n_for_effect(0.8, 1.0) == 15
    assert norm_ppf(0.975) + norm_ppf(0.8) == pytest.approx(2.8016, abs=1e-4)


def test_a_zero_mean_left_as_rounding_residue_needs_no_n_and_every_n_fits_an_int64() -> None:
    # The mean of per-sample means of three repeats whose differences sum to exactly 0.
    residue = float(np.mean([np.mean(d) for d in ([3, 1, -3], [-3, 1, -3], [2, 1, 1], [-2, 2, 0])]))
    assert residue != 0.0 and abs(residue) < 1e-15
    assert n_for_effect(residue, 1.25) is None and n_for_effect(-residue, 1.25) is None
    # Just above the tolerance the answer is huge but still an int64 (report.json's integers).
    smallest = n_for_effect(2 * NEGLIGIBLE_EFFECT_RTOL * 1.25, 1.25)
    assert smallest is not None and 10**17 < smallest < 2**63
