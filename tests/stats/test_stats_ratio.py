"""Issue 34 point 5: the paired relative change (ratio of means − 1) with a seeded cluster
bootstrap — checked against scipy.stats.bootstrap and hand-computed cases, and at its edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from knowmeter.stats import paired_relative_change


def _ratio(c: np.ndarray, t: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(t.mean(axis=axis) / c.mean(axis=axis) - 1)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_it_matches_scipy_bootstrap(method: str) -> None:
    rng = np.random.default_rng(1)
    c = rng.gamma(2.0, 0.01, 40)
    t = c * 1.4 + rng.normal(0, 0.004, 40)
    ours = paired_relative_change(c, t, b=3000, seed=11)
    ref = scipy.stats.bootstrap(
        (c, t), _ratio, paired=True, vectorized=True, n_resamples=3000, method=method,
        random_state=np.random.default_rng(11),
    )  # fmt: skip
    got = ours.percentile if method == "percentile" else ours.bca
    assert got == pytest.approx(tuple(ref.confidence_interval), rel=1e-9)
    assert ours.estimate == pytest.approx(t.sum() / c.sum() - 1)


def test_clusters_resample_whole_samples() -> None:
    """Two repeats of each sample: the clustered ratio is the ratio over the samples' sums."""
    c = np.array([1.0, 3.0, 2.0, 2.0, 5.0, 1.0, 4.0, 4.0])
    t = np.array([2.0, 2.0, 3.0, 5.0, 6.0, 4.0, 3.0, 7.0])
    samples = ["a", "a", "b", "b", "c", "c", "d", "d"]
    clustered = paired_relative_change(c, t, samples, b=500, seed=3)
    summed = paired_relative_change(c.reshape(4, 2).sum(1), t.reshape(4, 2).sum(1), b=500, seed=3)
    assert clustered.estimate == pytest.approx(32 / 22 - 1) and clustered.n_clusters == 4 and clustered.n == 8
    assert clustered.percentile == pytest.approx(summed.percentile) and clustered.bca == pytest.approx(summed.bca)


def test_edges_are_unknown_never_made_up() -> None:
    empty = paired_relative_change([], [])
    assert empty.estimate is None and empty.percentile is None and empty.n == 0
    one = paired_relative_change([2.0], [3.0])
    assert one.estimate == pytest.approx(0.5) and one.percentile is None and one.bca is None  # no CI from one pair
    free = paired_relative_change([0.0, 0.0, 0.0], [0.1, 0.2, 0.3])
    assert free.estimate is None and free.percentile is None  # no relative change from a zero control
    unknown = paired_relative_change([math.nan, math.nan], [1.0, math.nan])
    assert unknown.estimate is None and unknown.n == 0 and unknown.n_missing == 2
    flat = paired_relative_change([1.0, 2.0, 3.0, 4.0], [1.5, 3.0, 4.5, 6.0])  # zero variance of the ratio
    assert flat.estimate == pytest.approx(0.5) and flat.percentile == pytest.approx((0.5, 0.5))
    some = paired_relative_change([1.0, math.nan, 2.0, 4.0], [2.0, 5.0, 2.0, 4.0], b=200)
    assert some.n == 3 and some.n_missing == 1 and some.estimate == pytest.approx(8 / 7 - 1)
