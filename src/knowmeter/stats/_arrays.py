"""Array plumbing shared by the resampling tests: column matrices, cluster codes, per-cluster sums."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Elements per resampling chunk: keeps memory flat (a few MB) whatever B and the cluster count.
CHUNK_ELEMENTS = 262_144

#: What a ``shared_resamples`` block keeps of count matrices (larger ones are not kept).
MEMO_BYTES = 48 * 2**20

#: What it keeps of resampled sums (``resampled_dots``: B floats per vector, whatever the size).
DOTS_BYTES = 16 * 2**20

ResampleKey = tuple[int, int, int]  # (k, b, seed)


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


class ResampleMemo:
    """Resamples already drawn, for reuse by later calls with the same ``(k, b, seed)``: a run's
    variant summaries, its paired comparisons, its resources and their saturation curves all
    draw the same resamples.

    Two stores. Count matrices, as the smallest unsigned integer type that holds the counts,
    within ``max_bytes`` (what does not fit is drawn again when asked for). And resampled sums
    (``resampled_dots``: B floats per vector, whatever k), within ``DOTS_BYTES``: a vector
    ``announce``d before its resamples are drawn gets its sums in the same pass as the first
    vector asked for, so large runs, whose counts do not fit, still draw each set once."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = MEMO_BYTES if max_bytes is None else max_bytes
        self.used = 0
        self.dots_used = 0
        self._chunks: dict[ResampleKey, list[npt.NDArray[np.unsignedinteger[Any]]]] = {}
        self._dots: dict[tuple[ResampleKey, bytes], FloatArray] = {}
        self._wanted: dict[ResampleKey, dict[bytes, FloatArray]] = {}

    def get(self, key: ResampleKey) -> list[npt.NDArray[np.unsignedinteger[Any]]] | None:
        return self._chunks.get(key)

    def fits(self, k: int, b: int) -> bool:
        return self.used + k * b <= self.max_bytes  # at one byte per count (the usual case)

    def keep(self, key: ResampleKey, chunks: list[npt.NDArray[np.unsignedinteger[Any]]]) -> None:
        self.used += sum(c.nbytes for c in chunks)
        self._chunks[key] = chunks

    def announce(self, key: ResampleKey, vectors: Sequence[FloatArray]) -> None:
        """``vectors`` will be asked for with ``key``: resample them with the first that is."""
        wanted = self._wanted.setdefault(key, {})
        for v in vectors:
            vec = _vector(v)
            name = _name(vec)
            if (key, name) not in self._dots:
                wanted.setdefault(name, vec)

    def dots(self, key: ResampleKey, name: bytes) -> FloatArray | None:
        return self._dots.get((key, name))

    def announced(self) -> list[ResampleKey]:
        """The keys with announced vectors not resampled yet."""
        return [key for key, wanted in self._wanted.items() if wanted]

    def pending(self, key: ResampleKey) -> dict[bytes, FloatArray]:
        """The announced vectors of ``key`` not resampled yet (taken: the caller resamples them)."""
        return self._wanted.pop(key, {})

    def keep_dots(self, key: ResampleKey, name: bytes, sums: FloatArray) -> None:
        if self.dots_used + sums.nbytes <= DOTS_BYTES:
            sums.setflags(write=False)
            self.dots_used += sums.nbytes
            self._dots[(key, name)] = sums


_memo: ContextVar[ResampleMemo | None] = ContextVar("knowmeter_resample_memo", default=None)


@contextmanager
def shared_resamples(max_bytes: int | None = None) -> Iterator[ResampleMemo]:
    """Within this block, ``resample_counts`` draws each ``(k, b, seed)`` once while its counts
    fit ``max_bytes`` (``MEMO_BYTES`` unless given), and ``resampled_dots`` at any size for what
    was announced (see ``ResampleMemo``); the numbers are identical to drawing them again. A
    block inside another shares the outer one's memo (a report's sections and the comparison
    inside one of them)."""
    outer = _memo.get()
    if outer is not None:
        yield outer
        return
    memo = ResampleMemo(max_bytes)
    token = _memo.set(memo)
    try:
        yield memo
    finally:
        _memo.reset(token)


def resample_counts(k: int, b: int, seed: int) -> Iterator[tuple[int, int, FloatArray]]:
    """Bootstrap resamples of ``k`` clusters as count matrices, chunk by chunk.

    Row ``i`` of the full (b, k) matrix counts how often each cluster was drawn in resample ``i``.
    The draws are ``numpy.random.default_rng(seed).integers(0, k, (b, k))`` — the same indices
    ``scipy.stats.bootstrap`` draws with that generator — generated in row chunks (the stream is
    identical) so memory stays flat. Inside ``shared_resamples`` a repeated ``(k, b, seed)`` is
    served from memory.
    """
    memo = _memo.get()
    key = (k, b, seed)
    stored = memo.get(key) if memo is not None else None
    if stored is not None:
        start = 0
        for chunk in stored:
            yield start, start + chunk.shape[0], chunk.astype(np.float64)
            start += chunk.shape[0]
        return
    keep: list[npt.NDArray[np.unsignedinteger[Any]]] | None = [] if memo is not None and memo.fits(k, b) else None
    rng = np.random.default_rng(seed)
    for start, stop in chunk_rows(b, k):
        rows = stop - start
        idx = rng.integers(0, k, size=(rows, k))
        idx += (np.arange(rows, dtype=np.int64) * k)[:, None]
        flat = np.zeros(rows * k)  # counted straight into floats: no integer matrix to convert
        np.add.at(flat, idx.ravel(), 1.0)
        counts = flat.reshape(rows, k)
        if keep is not None:
            keep.append(counts.astype(np.min_scalar_type(int(counts.max(initial=0)))))
        yield start, stop, counts
    if memo is not None and keep is not None:
        memo.keep(key, keep)


def announce_resamples(k: int, b: int, seed: int, vectors: Sequence[FloatArray]) -> None:
    """Inside ``shared_resamples``: ``resampled_dots(k, b, seed, ...)`` will be asked for
    ``vectors``, so the first pass that draws these resamples computes their sums too (no-op
    outside a block, or for fewer than two clusters, which are never resampled)."""
    memo = _memo.get()
    if memo is not None and k >= 2:
        memo.announce((k, b, seed), vectors)


def resampled_dots(k: int, b: int, seed: int, vectors: Sequence[FloatArray]) -> list[FloatArray]:
    """Per vector ``v`` (length ``k``), its resampled sums ``counts @ v`` over the ``b`` resamples
    of ``resample_counts(k, b, seed)`` (one matrix-vector product per vector and chunk, so a
    vector's sums never depend on which others are resampled with it). Inside
    ``shared_resamples`` the sums are kept, and the pass that draws the resamples also resamples
    every vector announced for them (``announce_resamples``): the draws are made once."""
    vecs = [_vector(v) for v in vectors]
    memo = _memo.get()
    if memo is None:
        return _dot_pass(k, b, seed, vecs)
    key = (k, b, seed)
    names = [_name(v) for v in vecs]
    kept = {name: memo.dots(key, name) for name in names}
    todo = {name: v for name, v in zip(names, vecs, strict=True) if kept[name] is None}
    if todo:
        kept.update(_draw(memo, key, {**memo.pending(key), **todo}))
    return [sums for sums in (kept[name] for name in names) if sums is not None]


def draw_announced() -> None:
    """Inside ``shared_resamples``: resample every vector announced so far now, one pass per
    ``(k, b, seed)``, so that the vectors are not held while the statistics are computed."""
    memo = _memo.get()
    if memo is not None:
        for key in memo.announced():
            _draw(memo, key, memo.pending(key))


def _draw(memo: ResampleMemo, key: ResampleKey, todo: dict[bytes, FloatArray]) -> dict[bytes, FloatArray]:
    """The resampled sums of the vectors ``todo`` (by name), from one pass, kept in ``memo``."""
    drawn = dict(zip(todo, _dot_pass(*key, list(todo.values())), strict=True))
    for name, sums in drawn.items():
        memo.keep_dots(key, name, sums)
    return drawn


def _dot_pass(k: int, b: int, seed: int, vecs: list[FloatArray]) -> list[FloatArray]:
    out = [np.empty(b) for _ in vecs]
    for start, stop, counts in resample_counts(k, b, seed):
        for sums, v in zip(out, vecs, strict=True):
            sums[start:stop] = counts @ v
    return out


def _vector(v: npt.ArrayLike) -> FloatArray:
    return np.ascontiguousarray(v, dtype=np.float64)


def _name(vec: FloatArray) -> bytes:
    """A vector's identity in the memo: its exact bytes, hashed."""
    return hashlib.blake2b(vec.tobytes(), digest_size=20).digest()
