"""Seeded (cluster) bootstrap of a mean: percentile and BCa intervals from the same resamples.

Clusters: when observations are grouped (the repeats of one sample), whole clusters are resampled
with replacement and keep all their observations; the statistic is the mean over all observations
in the resample (sum of cluster sums / sum of cluster sizes). Without clusters each observation
is its own cluster, which is the ordinary bootstrap and draws exactly the indices
``scipy.stats.bootstrap`` draws from ``numpy.random.default_rng(seed)``.

BCa follows Efron & Tibshirani (1993) §14.3 as scipy does: bias correction ``z0`` from the share
of resamples below (ties counted half) the estimate, acceleration from the leave-one-cluster-out
jackknife. A resample mean counts as a tie when it is within ``TIE_RTOL`` (relative to the scale of
the estimate and the resamples) of the estimate: resample means and the estimate are sums taken in
different orders, so a mean that equals the estimate in exact arithmetic may differ in the last
bits, and comparing floats exactly made BCa(d) differ from BCa(3d)/3 by up to half a point.
Degenerate cases are reported as unknown (``None``), never as a made-up interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from knowmeter import defaults
from knowmeter.stats._arrays import (
    ClusterColumn,
    FloatArray,
    announce_resamples,
    as_columns,
    cluster_codes,
    group_by_clusters,
    reduce_columns,
    resampled_dots,
)
from knowmeter.stats._special import norm_cdf, norm_ppf

Interval = tuple[float, float]

#: Relative distance under which a resample mean equals the estimate (far above float noise of a
#: sum of up to millions of terms, far below any real gap between distinct resample means).
TIE_RTOL = 1e-9


@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrap estimate of a mean with its percentile and BCa intervals.

    ``percentile`` / ``bca`` are ``None`` when no interval can be computed (fewer than two
    clusters; BCa also when every resample falls on one side of the estimate). ``n`` counts the
    finite observations used, ``n_missing`` the NaN / infinite ones that were excluded.
    """

    # report.json's schema forbids unknown keys here whichever model pydantic meets it in first
    __pydantic_config__: ClassVar[Mapping[str, str]] = {"extra": "forbid"}  # a pydantic ConfigDict

    estimate: float | None
    standard_error: float | None
    percentile: Interval | None
    bca: Interval | None
    n: int
    n_missing: int
    n_clusters: int
    b: int
    seed: int
    level: float

    def interval(self, method: str) -> Interval | None:
        """The ``"percentile"`` or ``"bca"`` interval."""
        if method not in ("percentile", "bca"):
            raise ValueError(f"unknown interval method {method!r}")
        return self.percentile if method == "percentile" else self.bca

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "standard_error": self.standard_error,
            "percentile": list(self.percentile) if self.percentile else None,
            "bca": list(self.bca) if self.bca else None,
            "n": self.n,
            "n_missing": self.n_missing,
            "n_clusters": self.n_clusters,
            "b": self.b,
            "seed": self.seed,
            "level": self.level,
        }


def bootstrap_means(
    values: npt.ArrayLike,
    clusters: Sequence[Any] | npt.ArrayLike | None = None,
    *,
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = 0,
    level: float = defaults.CI_LEVEL,
) -> list[BootstrapResult]:
    """Bootstrap the mean of every column of ``values`` (shape ``(n,)`` or ``(n, m)``).

    NaN / infinite entries are excluded per column and counted in ``n_missing``. Columns whose
    finite values cover the same clusters share one set of resamples, and a column's result does
    not depend on the other columns: ``bootstrap_means(X)[j] == bootstrap_means(X[:, j])[0]``.
    """
    _check(b, level)
    matrix = as_columns(values)
    columns = reduce_columns(matrix, cluster_codes(clusters, matrix.shape[0]))
    results: list[BootstrapResult | None] = [None] * len(columns)
    for members in group_by_clusters(columns).values():
        group = [columns[j] for j in members]
        thetas = _resampled_means(group, b, seed)
        for j, col, theta in zip(members, group, thetas, strict=True):
            results[j] = _summarise(col, theta, b, seed, level)
    return [r for r in results if r is not None]


def bootstrap_mean(
    values: npt.ArrayLike,
    clusters: Sequence[Any] | npt.ArrayLike | None = None,
    *,
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = 0,
    level: float = defaults.CI_LEVEL,
) -> BootstrapResult:
    """Bootstrap CI of the mean of a 1-D array (optionally clustered)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError("bootstrap_mean takes a 1-D array; use bootstrap_means for several columns")
    return bootstrap_means(arr, clusters, b=b, seed=seed, level=level)[0]


def paired_bootstrap(
    control: npt.ArrayLike,
    treatment: npt.ArrayLike,
    clusters: Sequence[Any] | npt.ArrayLike | None = None,
    *,
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = 0,
    level: float = defaults.CI_LEVEL,
) -> BootstrapResult:
    """Bootstrap CI of the mean paired difference ``treatment - control`` (pairs aligned by
    position; a pair with a NaN on either side is excluded and counted)."""
    c, t = aligned_pairs(control, treatment)
    return bootstrap_mean(t - c, clusters, b=b, seed=seed, level=level)


def aligned_pairs(control: npt.ArrayLike, treatment: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The two arms of paired data as float arrays (``ValueError`` unless 1-D and aligned)."""
    c = np.asarray(control, dtype=np.float64)
    t = np.asarray(treatment, dtype=np.float64)
    if c.shape != t.shape or c.ndim != 1:
        raise ValueError(f"control and treatment must be 1-D and aligned, got {c.shape} and {t.shape}")
    return c, t


def _check(b: int, level: float) -> None:
    if b < 1:
        raise ValueError(f"the number of bootstrap resamples must be >= 1, got {b}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must be between 0 and 1, got {level}")


def announce_means(
    values: npt.ArrayLike,
    clusters: Sequence[Any] | npt.ArrayLike | None = None,
    *,
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> None:
    """Inside ``shared_resamples``: ``bootstrap_means`` will be asked for these ``values``, so
    the first pass that draws their resamples computes theirs too (``announce_resamples``)."""
    matrix = as_columns(values)
    columns = reduce_columns(matrix, cluster_codes(clusters, matrix.shape[0]))
    for members in group_by_clusters(columns).values():
        group = [columns[j] for j in members]
        announce_resamples(group[0].k, b, seed, _vectors(group))


def _vectors(group: list[ClusterColumn]) -> list[FloatArray]:
    """What the resampled means of columns sharing one cluster set are made of: each column's
    cluster sums, then (unless every cluster has the same size) each column's cluster sizes."""
    equal = all(col.equal_sizes for col in group)
    return [col.sums for col in group] + ([] if equal else [col.sizes for col in group])


def _resampled_means(group: list[ClusterColumn], b: int, seed: int) -> list[FloatArray | None]:
    """Bootstrap distributions (length b) of the means of columns sharing one cluster set."""
    k = group[0].k
    if k < 2:
        return [None] * len(group)
    # One matrix-vector product per column (not one matrix product for all) so that a column's
    # numbers never depend, even in the last bit, on which other columns were passed with it.
    sums = resampled_dots(k, b, seed, _vectors(group))
    theta = np.empty((b, len(group)))
    for i, col in enumerate(group):
        # With equal cluster sizes every draw holds the same number of observations.
        size = sums[len(group) + i] if len(sums) > len(group) else col.sizes[0] * k
        theta[:, i] = sums[i] / size
    return [theta[:, i] for i in range(len(group))]


def _summarise(col: ClusterColumn, theta: FloatArray | None, b: int, seed: int, level: float) -> BootstrapResult:
    estimate = col.total / col.n if col.n else None
    se = percentile = bca = None
    if estimate is not None and theta is not None:
        jackknife = (col.total - col.sums) / (col.n - col.sizes)
        se, percentile, bca = intervals_from_distribution(theta, estimate, jackknife, level)
    return BootstrapResult(estimate, se, percentile, bca, col.n, col.n_missing, col.k, b, seed, level)


def intervals_from_distribution(
    theta: FloatArray, estimate: float, jackknife: FloatArray, level: float
) -> tuple[float | None, Interval | None, Interval | None]:
    """Standard error, percentile and BCa intervals from a bootstrap distribution ``theta`` and
    the leave-one-cluster-out ``jackknife`` estimates (used for the BCa acceleration)."""
    alpha = (1.0 - level) / 2.0
    se = float(np.std(theta, ddof=1)) if theta.size > 1 else None
    tol = TIE_RTOL * max(abs(estimate), float(np.max(np.abs(theta))))
    if float(theta.max()) - float(theta.min()) <= tol:  # no spread at all (e.g. all values equal)
        point = (float(theta[0]), float(theta[0]))
        return se, point, point
    lo, hi = np.quantile(theta, [alpha, 1.0 - alpha])
    return se, (float(lo), float(hi)), _bca(theta, estimate, jackknife, alpha, tol)


def _bca(theta: FloatArray, estimate: float, jackknife: FloatArray, alpha: float, tol: float) -> Interval | None:
    below = np.count_nonzero(theta < estimate - tol)
    ties = np.count_nonzero(np.abs(theta - estimate) <= tol)
    share = (below + 0.5 * ties) / theta.size
    if not 0.0 < share < 1.0:
        return None
    z0 = norm_ppf(float(share))
    dev = jackknife.mean() - jackknife
    denom = float(np.sum(dev**2)) ** 1.5
    accel = float(np.sum(dev**3)) / (6.0 * denom) if denom > 0 else 0.0
    z_alpha = norm_ppf(alpha)
    bounds = []
    for z in (z_alpha, -z_alpha):
        num = z0 + z
        q = norm_cdf(z0 + num / (1.0 - accel * num))
        if not math.isfinite(q):
            return None
        bounds.append(q)
    lo, hi = np.quantile(theta, bounds)
    return float(lo), float(hi)
