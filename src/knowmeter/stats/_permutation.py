"""Paired sign-flip permutation test of a mean difference (optionally clustered).

Under the null hypothesis "the variant makes no difference" the two members of each pair are
exchangeable, so each paired difference is as likely to have either sign. With clusters (the
repeats of one sample) whole clusters flip together, which keeps the test valid when repeats are
correlated. The statistic is the mean difference; the p-value is two-sided,
``P(|T*| >= |T|)``: exact enumeration of all ``2^k`` sign vectors when that is no more than the
requested number of resamples (as ``scipy.stats.permutation_test`` decides), otherwise a seeded
Monte Carlo estimate ``(1 + hits) / (1 + resamples)`` (Phipson & Smyth 2010).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from knowmeter import defaults
from knowmeter.stats._arrays import (
    ClusterColumn,
    FloatArray,
    as_columns,
    chunk_rows,
    cluster_codes,
    group_by_clusters,
    reduce_columns,
)

#: Relative tolerance under which a resampled statistic counts as a tie (as scipy: 100 · eps).
_TIE = 100 * float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class PermutationResult:
    """Two-sided sign-flip test. ``p_value`` is None when there is nothing to test (no pairs)."""

    statistic: float | None
    p_value: float | None
    method: Literal["exact", "monte_carlo"] | None
    n_permutations: int
    n: int
    n_missing: int
    n_clusters: int
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "p_value": self.p_value,
            "method": self.method,
            "n_permutations": self.n_permutations,
            "n": self.n,
            "n_missing": self.n_missing,
            "n_clusters": self.n_clusters,
            "seed": self.seed,
        }


def sign_flip_tests(
    diffs: npt.ArrayLike,
    clusters: Sequence[Any] | npt.ArrayLike | None = None,
    *,
    n_resamples: int = defaults.PERMUTATION_SAMPLES,
    seed: int = 0,
) -> list[PermutationResult]:
    """Sign-flip test for every column of paired differences (shape ``(n,)`` or ``(n, m)``);
    NaN / infinite entries are excluded per column and counted in ``n_missing``."""
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    matrix = as_columns(diffs)
    columns = reduce_columns(matrix, cluster_codes(clusters, matrix.shape[0]))
    results: list[PermutationResult | None] = [None] * len(columns)
    for members in group_by_clusters(columns).values():
        group = [columns[j] for j in members]
        for j, result in zip(members, _test_group(group, n_resamples, seed), strict=True):
            results[j] = result
    return [r for r in results if r is not None]


def sign_flip_test(
    diffs: npt.ArrayLike,
    clusters: Sequence[Any] | npt.ArrayLike | None = None,
    *,
    n_resamples: int = defaults.PERMUTATION_SAMPLES,
    seed: int = 0,
) -> PermutationResult:
    """Sign-flip test of one column of paired differences."""
    arr = np.asarray(diffs, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError("sign_flip_test takes a 1-D array; use sign_flip_tests for several columns")
    return sign_flip_tests(arr, clusters, n_resamples=n_resamples, seed=seed)[0]


def _test_group(group: list[ClusterColumn], n_resamples: int, seed: int) -> list[PermutationResult]:
    k = group[0].k
    if k == 0:
        return [PermutationResult(None, None, None, 0, 0, c.n_missing, 0, None) for c in group]
    # Column by column (not one matrix product) so a column's numbers never depend, even in the
    # last bit, on which other columns were tested with it.
    sums = [c.sums for c in group]
    observed = np.array([c.total for c in group])
    threshold = np.abs(observed) * (1.0 - _TIE)
    method: Literal["exact", "monte_carlo"]
    if k < 63 and 2**k <= n_resamples:
        method, total, used_seed = "exact", 2**k, None
        p = _exact_hits(sums, observed, threshold) / total
    else:
        method, total, used_seed = "monte_carlo", n_resamples, seed
        p = (_monte_carlo_hits(sums, observed, threshold, n_resamples, seed) + 1.0) / (total + 1.0)
    return [
        PermutationResult(
            float(observed[i] / c.n), float(min(1.0, p[i])), method, total, c.n, c.n_missing, k, used_seed
        )
        for i, c in enumerate(group)
    ]


def _flipped_hits(flips: FloatArray, sums: list[FloatArray], observed: FloatArray, threshold: FloatArray) -> FloatArray:
    """How many rows of 0/1 ``flips`` (1 = flip the cluster's sign) give |T*| >= |T|, per column."""
    return np.array(
        [np.count_nonzero(np.abs(observed[i] - 2.0 * (flips @ s)) >= threshold[i]) for i, s in enumerate(sums)],
        dtype=np.float64,
    )


def _exact_hits(sums: list[FloatArray], observed: FloatArray, threshold: FloatArray) -> FloatArray:
    k = sums[0].size
    codes = np.arange(2**k, dtype=np.int64)[:, None]
    flips = ((codes >> np.arange(k, dtype=np.int64)) & 1).astype(np.float64)
    return _flipped_hits(flips, sums, observed, threshold)


def _monte_carlo_hits(
    sums: list[FloatArray], observed: FloatArray, threshold: FloatArray, n_resamples: int, seed: int
) -> FloatArray:
    k = sums[0].size
    rng = np.random.default_rng(seed)
    hits = np.zeros(len(sums))
    for start, stop in chunk_rows(n_resamples, k):
        rows = stop - start
        raw = np.frombuffer(rng.bytes((rows * k + 7) // 8), dtype=np.uint8)
        flips = np.unpackbits(raw, count=rows * k).reshape(rows, k).astype(np.float64)
        hits += _flipped_hits(flips, sums, observed, threshold)
    return hits
