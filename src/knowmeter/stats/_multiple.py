"""Multiple-comparison adjustment: Holm's step-down method and serial gatekeeping."""

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


def gatekept(gate_p: float | None, p_values: Sequence[float | None], weight: float = 1.0) -> list[float | None]:
    """Adjusted p-values of a family tested only once its gate hypothesis is rejected (serial
    gatekeeping, Dmitrienko, Offen & Westfall 2003): Holm within the family at ``weight · α``.

    The adjusted p-value of each member is ``max(gate_p, min(1, holm_p / weight))``: a member is
    rejected at level α exactly when the gate (adjusted p ``gate_p``) is rejected at α and the
    member's Holm p-value is below ``weight · α``. With the gate untested (``None``) nothing in the
    family is tested and every entry is ``None``."""
    if not 0.0 < weight <= 1.0:
        raise ValueError(f"the gatekeeping weight must be in (0, 1], got {weight}")
    if gate_p is None:
        return [None] * len(p_values)
    return [None if p is None else max(gate_p, min(1.0, p / weight)) for p in holm(p_values)]
