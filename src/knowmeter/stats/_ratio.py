"""Seeded (cluster) bootstrap of a paired relative change: ``sum(treatment) / sum(control) - 1``
over the pairs — the ratio of the arms' means, e.g. "+38% cost" — with percentile and BCa
intervals from the same resamples (``resample_counts``: the draws ``scipy.stats.bootstrap``
makes with that generator). Whole clusters (a sample's repeats) are resampled together. A pair
with a NaN / infinite value on either side is excluded and counted. Undefined is ``None``: no
pair, or a control total of zero; a resample whose control total is zero is left out of the
distribution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from knowmeter import defaults
from knowmeter.stats._arrays import cluster_codes, resample_counts
from knowmeter.stats._bootstrap import BootstrapResult, aligned_pairs, intervals_from_distribution


def paired_relative_change(
    control: npt.ArrayLike,
    treatment: npt.ArrayLike,
    clusters: Sequence[Any] | npt.ArrayLike | None = None,
    *,
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = 0,
    level: float = defaults.CI_LEVEL,
) -> BootstrapResult:
    """Bootstrap CI of ``mean(treatment) / mean(control) - 1`` over aligned pairs."""
    c, t = aligned_pairs(control, treatment)
    codes_all = cluster_codes(clusters, c.size)
    keep = np.isfinite(c) & np.isfinite(t)
    missing = int(c.size - keep.sum())
    c, t = c[keep], t[keep]
    _, codes = np.unique(codes_all[keep], return_inverse=True)
    k = int(codes.max()) + 1 if codes.size else 0
    c_sums = np.bincount(codes, weights=c, minlength=k)
    t_sums = np.bincount(codes, weights=t, minlength=k)
    total_c, total_t = float(c_sums.sum()), float(t_sums.sum())
    estimate = total_t / total_c - 1.0 if c.size and total_c != 0 else None
    se = percentile = bca = None
    if estimate is not None and k >= 2:
        theta = np.empty(b)
        for start, stop, counts in resample_counts(k, b, seed):
            denom = counts @ c_sums
            with np.errstate(divide="ignore", invalid="ignore"):
                theta[start:stop] = np.where(denom != 0, (counts @ t_sums) / denom - 1.0, np.nan)
        theta = theta[np.isfinite(theta)]
        with np.errstate(divide="ignore", invalid="ignore"):
            jackknife = (total_t - t_sums) / (total_c - c_sums) - 1.0
        if theta.size >= 2 and np.all(np.isfinite(jackknife)):
            se, percentile, bca = intervals_from_distribution(theta, estimate, jackknife, level)
        elif theta.size >= 2:
            se, percentile, _ = intervals_from_distribution(theta, estimate, np.zeros(k), level)
    return BootstrapResult(estimate, se, percentile, bca, int(c.size), missing, k, b, seed, level)
