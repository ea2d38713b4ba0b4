"""Agreement between raters (judges, annotators) and run-to-run spread (repeat ICC).

Krippendorff's α (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability") on a
``(raters, units)`` matrix with NaN for a missing rating; units with fewer than two ratings are not
pairable and are left out. ``interval`` uses δ² = (c - k)² in closed form, ``ordinal`` builds the
coincidence matrix over the distinct values and uses the rank-based ordinal metric. Quadratic
weighted κ uses weights (c - k)² on the category *values*, so an unused category does not shrink
the scale. All functions drop incomplete pairs / NaN and return None when the quantity is
undefined (too few values, no variance), never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from knowmeter import defaults
from knowmeter.stats._arrays import FloatArray, resample_counts
from knowmeter.stats._bootstrap import BootstrapResult, intervals_from_distribution


def _pairs(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"the two ratings must be aligned, got {a.shape} and {b.shape}")
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep]


def pearson(x: npt.ArrayLike, y: npt.ArrayLike) -> float | None:
    """Pearson correlation of aligned pairs; None for < 2 pairs or a constant side."""
    a, b = _pairs(x, y)
    if a.size < 2:
        return None
    da, db = a - a.mean(), b - b.mean()
    denom = float(np.sqrt(np.sum(da * da) * np.sum(db * db)))
    if denom == 0:
        return None
    return max(-1.0, min(1.0, float(np.sum(da * db)) / denom))


def mean_abs_diff(x: npt.ArrayLike, y: npt.ArrayLike) -> float | None:
    """Mean absolute difference of aligned pairs; None when there are none."""
    a, b = _pairs(x, y)
    return float(np.mean(np.abs(a - b))) if a.size else None


@dataclass(frozen=True)
class RepeatVariance:
    """One-way random-effects ANOVA of repeated measurements grouped by sample.

    ``icc`` is ICC(1) (Shrout & Fleiss 1979): the share of the variance that lies between samples,
    ``σ²_b / (σ²_b + σ²_w)`` with ``σ²_w = MS_within`` and ``σ²_b = (MS_between - MS_within) / k0``
    floored at 0 (``k0`` = the average group size corrected for unequal groups).
    ``repeat_share = 1 - icc`` is the share that is run-to-run noise. Both are None when there is
    no variance at all."""

    icc: float | None
    repeat_share: float | None
    ms_between: float
    ms_within: float
    n_samples: int
    n: int


def repeat_variance(
    values: npt.ArrayLike, samples: Sequence[object] | npt.NDArray[np.generic]
) -> RepeatVariance | None:
    """ICC(1) of ``values`` grouped by ``samples`` (NaN excluded); None unless there are at least
    two samples and some sample has two finite values."""
    v = np.asarray(values, dtype=np.float64).ravel()
    labels = np.asarray(samples)
    if labels.shape != v.shape:
        raise ValueError(f"one sample label per value needed, got {labels.shape} and {v.shape}")
    keep = np.isfinite(v)
    v, labels = v[keep], labels[keep]
    if v.size == 0:
        return None
    _, codes = np.unique(labels, return_inverse=True)
    sizes = np.bincount(codes).astype(np.float64)
    g, n = sizes.size, int(v.size)
    if g < 2 or n - g < 1:
        return None
    means = np.bincount(codes, weights=v) / sizes
    grand = float(v.mean())
    ms_between = float(np.sum(sizes * (means - grand) ** 2)) / (g - 1)
    ms_within = float(np.sum((v - means[codes]) ** 2)) / (n - g)
    k0 = (n - float(np.sum(sizes**2)) / n) / (g - 1)
    between = max(0.0, (ms_between - ms_within) / k0)
    total = between + ms_within
    icc = between / total if total > 0 else None
    return RepeatVariance(icc, None if icc is None else 1.0 - icc, ms_between, ms_within, g, n)


def _units(data: npt.ArrayLike) -> FloatArray:
    """The ``(raters, units)`` matrix restricted to pairable units (>= 2 ratings)."""
    m = np.asarray(data, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"reliability data must be (raters, units), got {m.ndim} dimensions")
    m = np.where(np.isfinite(m), m, np.nan)
    pairable = np.sum(np.isfinite(m), axis=0) >= 2
    return m[:, pairable]


def _interval_parts(units: FloatArray) -> FloatArray:
    """Per unit: [Σ_{i≠j}(v_i - v_j)² / (m - 1), m, Σv, Σv²] — additive over units."""
    count = np.sum(np.isfinite(units), axis=0).astype(np.float64)
    s1 = np.nansum(units, axis=0)
    s2 = np.nansum(units * units, axis=0)
    within = 2.0 * (count * s2 - s1 * s1) / (count - 1.0)
    return np.column_stack([within, count, s1, s2])


def _interval_alpha_from(totals: FloatArray) -> FloatArray:
    """α from summed unit parts (rows = resamples): 1 - (n - 1) Σ within / Σ_{i≠j} all."""
    within, n, s1, s2 = totals[..., 0], totals[..., 1], totals[..., 2], totals[..., 3]
    expected = 2.0 * (n * s2 - s1 * s1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * within / expected
    return np.where(expected > 1e-12 * np.maximum(1.0, n * s2), alpha, np.nan)


def _ordinal_alpha(units: FloatArray) -> float | None:
    values = np.unique(units[np.isfinite(units)])
    if values.size < 2:
        return None
    index = np.searchsorted(values, units)
    counts = np.zeros((units.shape[1], values.size))
    for r in range(units.shape[0]):
        ok = np.isfinite(units[r])
        np.add.at(counts, (np.flatnonzero(ok), index[r, ok]), 1.0)
    m_u = counts.sum(axis=1)
    weights = 1.0 / (m_u - 1.0)
    coincidence = (counts * weights[:, None]).T @ counts - np.diag(counts.T @ weights)
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    cum = np.concatenate([[0.0], np.cumsum(n_c)])
    lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
    hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
    delta2 = (cum[hi + 1] - cum[lo] - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    expected = float(np.sum(np.outer(n_c, n_c) * delta2))
    if expected == 0:
        return None
    return float(1.0 - (n - 1.0) * float(np.sum(coincidence * delta2)) / expected)


def krippendorff_alpha(data: npt.ArrayLike, level: Literal["interval", "ordinal"] = "interval") -> float | None:
    """Krippendorff's α of a ``(raters, units)`` matrix (NaN = missing). None when undefined:
    no pairable unit, or no variation at all in the pairable values."""
    units = _units(data)
    if units.shape[1] == 0:
        return None
    if level == "ordinal":
        return _ordinal_alpha(units)
    if level != "interval":
        raise ValueError(f"unsupported level of measurement {level!r}; use 'interval' or 'ordinal'")
    alpha = float(_interval_alpha_from(_interval_parts(units).sum(axis=0)))
    return alpha if np.isfinite(alpha) else None


def krippendorff_alpha_bootstrap(
    data: npt.ArrayLike, *, b: int = defaults.BOOTSTRAP_SAMPLES, seed: int = 0, level: float = defaults.CI_LEVEL
) -> BootstrapResult:
    """Interval α with a seeded bootstrap CI over units (units resampled with replacement;
    percentile and BCa, the latter with the leave-one-unit-out jackknife). Resamples in which α
    is undefined (no variation) are left out of the quantiles."""
    units = _units(data)
    parts = _interval_parts(units)
    k = parts.shape[0]
    totals = parts.sum(axis=0)
    estimate_arr = _interval_alpha_from(totals)
    estimate = float(estimate_arr) if np.isfinite(estimate_arr) else None
    n_values = int(totals[1]) if k else 0
    se = percentile = bca = None
    if estimate is not None and k >= 2:
        theta = np.empty(b)
        for start, stop, counts in resample_counts(k, b, seed):
            theta[start:stop] = _interval_alpha_from(counts @ parts)
        jackknife = _interval_alpha_from(totals[None, :] - parts)
        theta = theta[np.isfinite(theta)]
        if theta.size >= 2 and np.all(np.isfinite(jackknife)):
            se, percentile, bca = intervals_from_distribution(theta, estimate, jackknife, level)
    return BootstrapResult(estimate, se, percentile, bca, n_values, 0, k, b, seed, level)


def weighted_kappa(
    rater_a: npt.ArrayLike, rater_b: npt.ArrayLike, categories: Sequence[float] | None = None
) -> float | None:
    """Quadratic-weighted Cohen's κ of two raters' category ratings (pairs with NaN dropped).
    ``categories`` defaults to the values either rater used. None when there are no pairs or
    the chance disagreement is zero (both raters constant on the same category)."""
    a, b = _pairs(rater_a, rater_b)
    if a.size == 0:
        return None
    cats = np.unique(np.concatenate([a, b])) if categories is None else np.asarray(sorted(categories), float)
    ia, ib = np.searchsorted(cats, a), np.searchsorted(cats, b)
    if np.any(ia >= cats.size) or np.any(ib >= cats.size) or np.any(cats[ia] != a) or np.any(cats[ib] != b):
        raise ValueError("a rating is not one of the categories")
    observed = np.zeros((cats.size, cats.size))
    np.add.at(observed, (ia, ib), 1.0)
    observed /= a.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weights = np.subtract.outer(cats, cats) ** 2
    chance = float(np.sum(weights * expected))
    if chance == 0:
        return None
    return 1.0 - float(np.sum(weights * observed)) / chance
