"""Which samples changed outcome between two runs (the viewer's compare page): each sample ×
variant × repeat present in both runs whose pass/fail or execution error differs, or present in
one run only (the page fetches both tasks' detail when one is opened)."""

from __future__ import annotations

from dataclasses import dataclass

from knowmeter.report import ReportView
from knowmeter.report.html import id_key

#: changed tasks listed on the page; the rest are counted
CHANGES_SHOWN = 300


@dataclass(frozen=True)
class Side:
    """One run's task as the compare page shows it (None: the run has no such task)."""

    outcome: str
    composite: float | None


@dataclass(frozen=True)
class Change:
    sample_id: str
    variant: str
    repeat: int
    a: Side | None
    b: Side | None


def _side(view: ReportView) -> dict[tuple[str, str, int], Side]:
    out = {}
    for t in view.tasks():
        outcome = "error" if t.error else "pass" if t.passed else "fail" if t.passed is False else "unknown"
        out[(t.sample_id, t.variant, t.repeat)] = Side(outcome, t.composite)
    return out


def changes(a: ReportView, b: ReportView) -> tuple[list[Change], int]:
    """(the first ``CHANGES_SHOWN`` changed tasks, sorted by sample id — numbers as numbers —
    variant and repeat; how many changed in all)."""
    left, right = _side(a), _side(b)
    changed = [
        k for k in set(left) | set(right) if k not in left or k not in right or left[k].outcome != right[k].outcome
    ]
    changed.sort(key=lambda k: (id_key(k[0]), k[1], k[2]))
    return [Change(*k, left.get(k), right.get(k)) for k in changed[:CHANGES_SHOWN]], len(changed)
