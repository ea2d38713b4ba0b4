"""The gap inventory lists only signals of rows the page holds, at most a cap, and starts
collapsed when long (issue 33, point 1)."""

from __future__ import annotations

from knowmeter.report._view import GapRow, GapSignal
from knowmeter.report.html._inventory import OPEN_ROWS, inventories


def _gaps(n: int) -> GapRow:
    signals = [GapSignal(str(i), 1, "failed_search", "Grep", "x", "no match", 1) for i in range(n)]
    return GapRow("a", None, None, None, None, {}, None, None, None, signals)


def test_signals_of_rows_not_on_the_page_are_counted_not_linked() -> None:
    rows = [{"id": str(i), "r": 1} for i in range(0, 300, 2)]  # the page holds the even ids
    (inv,) = inventories([_gaps(300)], rows, cap=100)
    assert [s.sample_id for s in inv.signals] == [str(i) for i in range(0, 200, 2)]
    assert (inv.total, inv.not_on_page, inv.over_cap) == (300, 150, 50)
    assert not inv.open


def test_a_short_inventory_is_open_and_a_repeat_less_signal_matches_its_sample() -> None:
    gaps = _gaps(OPEN_ROWS)
    gaps.signals.append(GapSignal("0", None, "hedging", None, None, "maybe", 1))
    (inv,) = inventories([gaps], [{"id": str(i), "r": 1} for i in range(OPEN_ROWS)])
    assert len(inv.signals) == OPEN_ROWS + 1 and inv.not_on_page == 0
    assert not inv.open
    (inv,) = inventories([_gaps(OPEN_ROWS)], [{"id": str(i), "r": 1} for i in range(OPEN_ROWS)])
    assert inv.open
