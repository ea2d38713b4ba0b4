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
from knowmeter.stats._arrays import FloatArray, announce_resamples, cluster_codes, resampled_dots
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
    n, missing, k, c_sums, t_sums = _cluster_sums(control, treatment, clusters)
    total_c, total_t = float(c_sums.sum()), float(t_sums.sum())
    estimate = total_t / total_c - 1.0 if n and total_c != 0 else None
    se = percentile = bca = None
    if estimate is not None and k >= 2:
        denom, num = resampled_dots(k, b, seed, [c_sums, t_sums])
        with np.errstate(divide="ignore", invalid="ignore"):
            theta = np.where(denom != 0, num / denom - 1.0, np.nan)
        theta = theta[np.isfinite(theta)]
        with np.errstate(divide="ignore", invalid="ignore"):
            jackknife = (total_t - t_sums) / (total_c - c_sums) - 1.0
        if theta.size >= 2 and np.all(np.isfinite(jackknife)):
            se, percentile, bca = intervals_from_distribution(theta, estimate, jackknife, level)
        elif theta.size >= 2:
            se, percentile, _ = intervals_from_distribution(theta, estimate, np.zeros(k), level)
    return BootstrapResult(estimate, se, percentile, bca, n, missing, k, b, seed, level)


def announce_relative_change(
    control: npt.ArrayLike,
    treatment: npt.ArrayLike,
    clusters: Sequence[Any] | npt.ArrayLike | None = None,
    *,
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> None:
    """Inside ``shared_resamples``: ``paired_relative_change`` will be asked for these pairs, so
    the first pass that draws their resamples computes theirs too (``announce_resamples``)."""
    _, _, k, c_sums, t_sums = _cluster_sums(control, treatment, clusters)
    announce_resamples(k, b, seed, [c_sums, t_sums])


def _cluster_sums(
    control: npt.ArrayLike, treatment: npt.ArrayLike, clusters: Sequence[Any] | npt.ArrayLike | None
) -> tuple[int, int, int, FloatArray, FloatArray]:
    """How many pairs are known on both sides, how many are not, the number of clusters the
    known ones cover and each arm's per-cluster sums."""
    c, t = aligned_pairs(control, treatment)
    codes_all = cluster_codes(clusters, c.size)
    keep = np.isfinite(c) & np.isfinite(t)
    missing = int(c.size - keep.sum())
    c, t = c[keep], t[keep]
    _, codes = np.unique(codes_all[keep], return_inverse=True)
    k = int(codes.max()) + 1 if codes.size else 0
    c_sums: FloatArray = np.bincount(codes, weights=c, minlength=k).astype(np.float64, copy=False)
    t_sums: FloatArray = np.bincount(codes, weights=t, minlength=k).astype(np.float64, copy=False)
    return int(c.size), missing, k, c_sums, t_sums
