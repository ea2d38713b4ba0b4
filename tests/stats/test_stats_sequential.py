"""Group-sequential boundaries (Haybittle–Peto; Lan–DeMets O'Brien–Fleming-type spending, capped
interims), their crossing probabilities and conditional power."""

from __future__ import annotations

import numpy as np
import pytest

from knowmeter.stats import (
    INTERIM_CAP,
    conditional_power,
    crossing_probabilities,
    haybittle_peto_boundaries,
    nominal_alpha,
    obf_spent,
    spending_boundaries,
)


def _crossings(fractions: list[float], bounds: list[float], m: int = 200_000) -> np.ndarray:
    """Share of Brownian paths under H0 first crossing ``|Z| >= c`` at each look."""
    ts = np.asarray(fractions)
    rng = np.random.default_rng(5)
    z = (rng.standard_normal((m, ts.size)) * np.sqrt(np.diff(np.r_[0.0, ts]))).cumsum(axis=1) / np.sqrt(ts)
    cross = np.abs(z) >= np.asarray(bounds)
    first = np.where(cross.any(axis=1), cross.argmax(axis=1), -1)
    return np.array([(first == k).mean() for k in range(ts.size)])


def test_a_single_look_is_the_fixed_test():
    assert spending_boundaries([1.0], 0.05) == [pytest.approx(1.959964, abs=1e-4)]


@pytest.mark.parametrize(
    "fractions", [[0.2, 0.4, 0.6, 0.8, 1.0], [0.4, 0.55, 0.7, 0.85, 1.0], [0.1 * k for k in range(1, 11)]]
)
def test_the_looks_spend_exactly_alpha_in_total(fractions):
    bounds = spending_boundaries(fractions, 0.05)
    spent = _crossings(fractions, bounds)
    assert spent.sum() == pytest.approx(0.05, abs=0.0025)  # Monte Carlo SE ≈ 0.0005
    assert all(c <= INTERIM_CAP + 1e-9 for c in bounds[:-1])  # every interim is reachable by a p of 0.001
    assert bounds[-1] == pytest.approx(2.0, abs=0.15)  # the final look keeps almost all the fixed test's power


def test_uncapped_looks_follow_the_spending_function():
    fractions = [0.5, 0.75, 1.0]
    bounds = spending_boundaries(fractions, 0.05, cap=50.0)
    spent = _crossings(fractions, bounds)
    expected = np.diff([0.0, *(obf_spent(t, 0.05) for t in fractions)])
    assert spent == pytest.approx(expected, abs=0.002)
    assert bounds[0] == pytest.approx(1.959964 / np.sqrt(0.5), abs=1e-3)  # O'Brien–Fleming shape


def test_fractions_must_increase():
    with pytest.raises(ValueError, match="must increase"):
        spending_boundaries([0.5, 0.5, 1.0], 0.05)


def test_nominal_alpha_and_conditional_power():
    assert nominal_alpha(1.959964) == pytest.approx(0.05, abs=1e-5)
    # no data yet (t → 0): the design's power; a drift of 2.8 gives 80% at 1.96
    assert conditional_power(0.0, 1e-9, 2.8, 1.959964) == pytest.approx(0.80, abs=0.01)
    # a bad trend halfway lowers it, a good one raises it; at the end it is the outcome itself
    assert conditional_power(-1.0, 0.5, 2.8, 2.0) < 0.2 < 0.9 < conditional_power(2.5, 0.5, 2.8, 2.0)
    assert conditional_power(2.1, 1.0, 0.0, 2.0) == 1.0 and conditional_power(1.9, 1.0, 9.0, 2.0) == 0.0


def _no_crossing_scipy(fractions: list[float], bounds: list[float]) -> float:
    """P(|Z_k| < c_k at every look) under H0, independently of our integration: the looks' z
    scores are jointly normal with corr(Z_i, Z_j) = √(t_i / t_j) (Genz's algorithm in scipy)."""
    from scipy.stats import multivariate_normal

    t = np.asarray(fractions)
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    c = np.asarray(bounds)
    mvn = multivariate_normal(mean=np.zeros(t.size), cov=cov, abseps=1e-6, releps=1e-6, maxpts=1_000_000)
    return float(mvn.cdf(c, lower_limit=-c))


@pytest.mark.slow
@pytest.mark.parametrize(
    "fractions", [[0.4, 0.6, 0.8, 1.0], [0.2, 0.4, 0.6, 0.8, 1.0], [0.1 * k for k in range(1, 11)]]
)
def test_haybittle_peto_interims_at_3_29_and_the_last_look_at_alpha(fractions):
    bounds = haybittle_peto_boundaries(fractions, 0.05)
    assert bounds[:-1] == [INTERIM_CAP] * (len(fractions) - 1)
    assert bounds[-1] == pytest.approx(1.959964, abs=1e-6) and nominal_alpha(bounds[-1]) == pytest.approx(0.05)
    # the overall level is a little above alpha: each interim adds under its nominal 0.001
    level = sum(crossing_probabilities(fractions, bounds))
    assert level == pytest.approx(1 - _no_crossing_scipy(fractions, bounds), abs=2e-5)
    assert 0.05 < level < 0.05 + 0.001 * (len(fractions) - 1)


@pytest.mark.slow
def test_the_overall_level_of_haybittle_peto_designs():
    """The figures design/decisions.md quotes (computed here by integration, checked by scipy)."""
    ten = [0.1 * k for k in range(1, 11)]
    assert sum(crossing_probabilities(ten, haybittle_peto_boundaries(ten, 0.05))) == pytest.approx(0.0522, abs=1e-4)
    seven = [0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]  # 50 samples, looks every 5 from 20
    assert sum(crossing_probabilities(seven, haybittle_peto_boundaries(seven, 0.05))) == pytest.approx(0.0506, abs=1e-4)


@pytest.mark.slow
def test_crossing_probabilities_of_a_spending_design_sum_to_alpha():
    fractions = [0.2, 0.4, 0.6, 0.8, 1.0]
    bounds = spending_boundaries(fractions, 0.05)
    assert sum(crossing_probabilities(fractions, bounds)) == pytest.approx(0.05, abs=1e-6)
    assert 1 - _no_crossing_scipy(fractions, bounds) == pytest.approx(0.05, abs=2e-5)
    uncapped = spending_boundaries(fractions, 0.05, cap=50.0)
    spent = np.cumsum(crossing_probabilities(fractions, uncapped))
    assert spent == pytest.approx([obf_spent(t, 0.05) for t in fractions], abs=1e-6)
