"""The gap inventory as the page shows it: per variant, the signals whose sample row the page
holds (so every link opens a row on the page), at most ``INVENTORY_ROWS`` of them, and how many
were left out and why."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from knowmeter.report._view import GapRow, GapSignal

#: signals listed per variant; the rest are counted (report.json lists every one)
INVENTORY_ROWS = 100
#: an inventory with more rows than this starts collapsed
OPEN_ROWS = 50


@dataclass(frozen=True)
class Inventory:
    variant: str
    signals: list[GapSignal]
    total: int
    not_on_page: int
    over_cap: int

    @property
    def open(self) -> bool:
        return len(self.signals) <= OPEN_ROWS


def inventories(
    gaps: Iterable[GapRow], rows: Iterable[Mapping[str, Any]], cap: int = INVENTORY_ROWS
) -> list[Inventory]:
    """One inventory per variant's gap row, given the page's sample rows (``id``, ``r``)."""
    keys = {(r["id"], r["r"]) for r in rows}
    ids = {k[0] for k in keys}
    out = []
    for g in gaps:
        on_page = [
            s for s in g.signals if ((s.sample_id, s.repeat) in keys if s.repeat is not None else s.sample_id in ids)
        ]
        on_page.sort(key=lambda s: s.source)
        out.append(
            Inventory(
                variant=g.variant,
                signals=on_page[:cap],
                total=len(g.signals),
                not_on_page=len(g.signals) - len(on_page),
                over_cap=max(len(on_page) - cap, 0),
            )
        )
    return out
