"""A variant's or run's known agent cost in words, the same on every terminal surface (the
summary, ``runs``, ``trends``): dollars with their sign, and the tasks whose cost is unknown
named as tasks — never a bare number, never an unknown read as $0."""

from __future__ import annotations


def known_cost_text(known_usd: float | None, unknown_tasks: int | None) -> str:
    """``$0.1000 (+10 tasks unknown)``; ``unknown`` when no known figure was recorded."""
    text = "unknown" if known_usd is None else f"${known_usd:.4f}"
    return text + (f" (+{unknown_tasks} tasks unknown)" if unknown_tasks else "")
