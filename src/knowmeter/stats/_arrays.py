"""Array plumbing shared by the resampling tests: column matrices, cluster codes, per-cluster sums."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Elements per resampling chunk: keeps memory flat (a few MB) whatever B and the cluster count.
CHUNK_ELEMENTS = 262_144


def as_columns(values: npt.ArrayLike) -> FloatArray:
    """``values`` as a float matrix with one column per metric (a 1-D input becomes one column)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        return arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"expected a 1-D or 2-D array, got {arr.ndim} dimensions")
    return arr


def cluster_codes(clusters: Sequence[Any] | npt.ArrayLike | None, n: int) -> IntArray:
    """Integer cluster codes (0..K-1, in sorted label order); no clusters = one cluster per row."""
    if clusters is None:
        return np.arange(n, dtype=np.int64)
    labels = np.asarray(clusters)
    if labels.shape != (n,):
        raise ValueError(f"clusters must have one label per row ({n}), got shape {labels.shape}")
    _, codes = np.unique(labels, return_inverse=True)
    return codes.astype(np.int64).reshape(n)


@dataclass(frozen=True)
class ClusterColumn:
    """One metric column reduced to its clusters: only clusters with at least one finite value."""

    present: IntArray  # cluster codes that have a finite value, ascending
    sums: FloatArray  # per present cluster: sum of its finite values
    sizes: FloatArray  # per present cluster: how many finite values
    n_missing: int  # NaN / infinite entries excluded

    @property
    def k(self) -> int:
        return int(self.present.size)

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    @property
    def total(self) -> float:
        return float(np.sum(self.sums))

    @property
    def equal_sizes(self) -> bool:
        return bool(self.k == 0 or np.all(self.sizes == self.sizes[0]))


def reduce_columns(matrix: FloatArray, codes: IntArray) -> list[ClusterColumn]:
    """Per column: per-cluster sums and sizes of the finite values."""
    n_clusters = int(codes.max()) + 1 if codes.size else 0
    columns: list[ClusterColumn] = []
    for j in range(matrix.shape[1]):
        col = matrix[:, j]
        finite = np.isfinite(col)
        c = codes[finite]
        sizes = np.bincount(c, minlength=n_clusters).astype(np.float64)
        sums = np.bincount(c, weights=col[finite], minlength=n_clusters).astype(np.float64)
        present = np.flatnonzero(sizes > 0).astype(np.int64)
        columns.append(ClusterColumn(present, sums[present], sizes[present], int(col.size - finite.sum())))
    return columns


def group_by_clusters(columns: Sequence[ClusterColumn]) -> dict[bytes, list[int]]:
    """Column indices grouped by their exact set of present clusters (same set = same resamples)."""
    groups: dict[bytes, list[int]] = {}
    for j, col in enumerate(columns):
        groups.setdefault(col.present.tobytes(), []).append(j)
    return groups


def chunk_rows(total_rows: int, k: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` row ranges so that each chunk holds about CHUNK_ELEMENTS elements."""
    step = max(1, CHUNK_ELEMENTS // max(k, 1))
    for start in range(0, total_rows, step):
        yield start, min(start + step, total_rows)


def resample_counts(k: int, b: int, seed: int) -> Iterator[tuple[int, int, FloatArray]]:
    """Bootstrap resamples of ``k`` clusters as count matrices, chunk by chunk.

    Row ``i`` of the full (b, k) matrix counts how often each cluster was drawn in resample ``i``.
    The draws are ``numpy.random.default_rng(seed).integers(0, k, (b, k))`` — the same indices
    ``scipy.stats.bootstrap`` draws with that generator — generated in row chunks (the stream is
    identical) so memory stays flat.
    """
    rng = np.random.default_rng(seed)
    for start, stop in chunk_rows(b, k):
        rows = stop - start
        idx = rng.integers(0, k, size=(rows, k))
        idx += (np.arange(rows, dtype=np.int64) * k)[:, None]
        counts = np.bincount(idx.ravel(), minlength=rows * k).reshape(rows, k)
        yield start, stop, counts.astype(np.float64)
