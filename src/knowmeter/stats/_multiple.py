"""Multiple-comparison adjustment: Holm's step-down method."""

from __future__ import annotations

from collections.abc import Sequence


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values in the input order. ``None`` entries (untestable comparisons) are
    not part of the family and stay ``None``; the family size is the number of real p-values."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(tested)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
