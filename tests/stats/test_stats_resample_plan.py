"""Resamples announced before they are drawn (issue 32): every statistic of one
``shared_resamples`` block that resamples the same ``(k, b, seed)`` uses one draw, whether or not
the count matrices fit the memo, and the numbers are those of drawing them again."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from knowmeter.stats import (
    _arrays,
    announce_means,
    announce_relative_change,
    bootstrap_means,
    paired_relative_change,
    shared_resamples,
)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The draws made from now on, one ``(b, k)`` per set of resamples drawn."""
    chunk_rows, draws = _arrays.chunk_rows, []

    def counting(total_rows: int, k: int) -> Any:
        draws.append((total_rows, k))
        return chunk_rows(total_rows, k)

    monkeypatch.setattr(_arrays, "chunk_rows", counting)
    return draws


def _statistics(values: np.ndarray, control: np.ndarray, labels: np.ndarray) -> list[Any]:
    return [
        bootstrap_means(values, labels, b=1500, seed=3),
        paired_relative_change(control, values[:, 0], labels, b=1500, seed=3),
        bootstrap_means(values[:, 1] - control, labels, b=1500, seed=3),
    ]


@pytest.mark.parametrize("max_bytes", [None, 0])
def test_announced_statistics_share_one_draw_and_change_no_number(
    max_bytes: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(8)
    labels = np.repeat(np.arange(150), 2)
    values, control = rng.normal(size=(300, 3)), rng.uniform(1.0, 2.0, size=300)
    values[5, 2] = np.nan  # its cluster keeps one value: unequal sizes, resampled with the sums
    alone = _statistics(values, control, labels)
    draws = _counting(monkeypatch)
    with shared_resamples(max_bytes=max_bytes) as memo:
        announce_means(values, labels, b=1500, seed=3)
        announce_relative_change(control, values[:, 0], labels, b=1500, seed=3)
        announce_means(values[:, 1] - control, labels, b=1500, seed=3)
        shared = _statistics(values, control, labels)
        assert memo.used == (0 if max_bytes == 0 else 150 * 1500)
    assert draws == [(1500, 150)]
    assert shared == alone


def test_a_statistic_not_announced_draws_again_only_when_the_counts_do_not_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = np.random.default_rng(2).normal(size=(200, 2))
    alone = [bootstrap_means(values[:, j], b=800, seed=1) for j in (0, 1)]
    draws = _counting(monkeypatch)
    with shared_resamples(max_bytes=0):
        assert [bootstrap_means(values[:, j], b=800, seed=1) for j in (0, 1)] == alone
        assert bootstrap_means(values[:, 0], b=800, seed=1) == alone[0]  # its sums were kept
    assert draws == [(800, 200), (800, 200)]


@pytest.mark.parametrize("k", [1, 2, 3, 7, 50, 1001])
def test_resample_counts_are_the_draws_counted(k: int) -> None:
    """Each chunk's counts are, row by row, how often ``default_rng(seed).integers(0, k, (b, k))``
    drew each cluster — counted into floats (issue 32) exactly as the integer count matrix was."""
    b, seed = 700, 11
    draws = np.random.default_rng(seed)
    for start, stop, counts in _arrays.resample_counts(k, b, seed):
        idx = draws.integers(0, k, size=(stop - start, k))
        expected = np.stack([np.bincount(row, minlength=k) for row in idx]).astype(np.float64)
        assert counts.dtype == np.float64 and counts.flags.c_contiguous
        np.testing.assert_array_equal(counts, expected)
