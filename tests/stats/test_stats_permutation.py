"""Sign-flip permutation test against scipy.stats.permutation_test and ttest_rel."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from knowmeter.stats import sign_flip_test, sign_flip_tests


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    means: np.ndarray = np.mean(x - y, axis=axis)
    return means


def _scipy_p(treatment: np.ndarray, control: np.ndarray, n_resamples: int, seed: int) -> float:
    res = ss.permutation_test(
        (treatment, control),
        _mean_diff,
        permutation_type="samples",
        n_resamples=n_resamples,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(res.pvalue)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 11, 13])
def test_exact_enumeration_equals_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    control = rng.integers(1, 6, n).astype(float)
    treatment = control + rng.normal(0.5, 1.0, n)
    ours = sign_flip_test(treatment - control, n_resamples=9999)
    assert ours.method == "exact" and ours.n_permutations == 2**n and ours.seed is None
    assert ours.p_value == pytest.approx(_scipy_p(treatment, control, 9999, 0), abs=1e-12)


def test_exact_with_integer_ties_equals_scipy() -> None:
    control = np.array([3.0, 4.0, 2.0, 5.0, 3.0, 4.0, 1.0, 3.0])
    treatment = np.array([4.0, 4.0, 3.0, 5.0, 2.0, 5.0, 2.0, 4.0])
    ours = sign_flip_test(treatment - control)
    assert ours.p_value == pytest.approx(_scipy_p(treatment, control, 9999, 0), abs=1e-12)


def test_monte_carlo_agrees_with_scipy_within_resampling_error() -> None:
    rng = np.random.default_rng(40)
    control = rng.normal(3.0, 1.0, 40)
    treatment = control + rng.normal(0.3, 1.0, 40)
    ours = sign_flip_test(treatment - control, n_resamples=20_000, seed=3)
    ref = _scipy_p(treatment, control, 20_000, 3)
    assert ours.method == "monte_carlo" and ours.seed == 3
    assert ours.p_value is not None
    assert abs(ours.p_value - ref) < 4 * np.sqrt(ref * (1 - ref) / 20_000) + 1e-3


def test_close_to_the_paired_t_test_for_normal_differences() -> None:
    rng = np.random.default_rng(5)
    control = rng.normal(3.0, 1.0, 200)
    treatment = control + rng.normal(0.15, 1.0, 200)
    ours = sign_flip_test(treatment - control, n_resamples=20_000, seed=1)
    assert ours.p_value == pytest.approx(ss.ttest_rel(treatment, control).pvalue, abs=0.02)


def test_clusters_flip_together() -> None:
    rng = np.random.default_rng(6)
    per_sample = rng.normal(0.4, 1.0, 30)
    labels = np.repeat(np.arange(30), 4)
    clustered = sign_flip_test(np.repeat(per_sample, 4), labels, n_resamples=5000, seed=2)
    sample_level = sign_flip_test(per_sample, n_resamples=5000, seed=2)
    naive = sign_flip_test(np.repeat(per_sample, 4), n_resamples=5000, seed=2)
    assert clustered.p_value == sample_level.p_value
    assert clustered.n_clusters == 30 and clustered.n == 120
    assert naive.p_value is not None and clustered.p_value is not None
    assert naive.p_value < clustered.p_value  # treating repeats as independent overstates evidence


def test_edge_cases() -> None:
    empty = sign_flip_test([])
    assert (empty.p_value, empty.statistic, empty.method) == (None, None, None)
    single = sign_flip_test([0.7])
    assert single.p_value == 1.0 and single.statistic == pytest.approx(0.7)
    zeros = sign_flip_test([0.0] * 20, seed=1)
    assert zeros.p_value == 1.0
    with_nan = sign_flip_test([1.0, np.nan, 2.0, 1.5])
    assert (with_nan.n, with_nan.n_missing) == (3, 1) and with_nan.p_value == pytest.approx(0.25)


def test_columns_match_single_column_calls() -> None:
    rng = np.random.default_rng(2)
    matrix = rng.normal(0.2, 1.0, (50, 3))
    matrix[::7, 1] = np.nan
    together = sign_flip_tests(matrix, n_resamples=3000, seed=9)
    assert together == [sign_flip_test(matrix[:, j], n_resamples=3000, seed=9) for j in range(3)]
