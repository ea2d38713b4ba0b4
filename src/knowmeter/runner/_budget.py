"""Cost budget: the total is never exceeded, and unknown costs are counted as unknown."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Budget:
    """Tracks spend against ``total_usd``.

    A task may start only when its reservation still fits: the per-task cap when one is set,
    otherwise the highest cost seen so far; before any cost is known, tasks start one at a time
    (so the first costs are learned before money is committed in parallel). A task whose cost
    the executor did not report counts as *unknown*: it is not added as 0, and the report says
    the budget could not account for it.
    """

    total_usd: float | None = None
    per_task_usd: float | None = None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    in_flight: int = 0
    unknown_tasks: int = 0
    known_tasks: int = 0
    max_seen_usd: float | None = None
    refused: int = 0

    def _estimate(self) -> float | None:
        if self.per_task_usd is not None:
            return self.per_task_usd
        return self.max_seen_usd

    def try_reserve(self) -> float | None:
        """Reserve room for one task; returns the amount reserved, or None when it doesn't fit."""
        if self.total_usd is None:
            self.in_flight += 1
            return 0.0
        estimate = self._estimate()
        if estimate is None:
            if self.in_flight > 0 or self.spent_usd >= self.total_usd:
                return None
            estimate = 0.0
        if self.spent_usd + self.reserved_usd + estimate > self.total_usd + 1e-12:
            return None
        self.reserved_usd += estimate
        self.in_flight += 1
        return estimate

    def settle(self, reserved: float, cost_usd: float | None) -> None:
        """Release a reservation and book the task's actual cost."""
        self.reserved_usd -= reserved
        self.in_flight -= 1
        if cost_usd is None:
            self.unknown_tasks += 1
            return
        self.known_tasks += 1
        self.spent_usd += cost_usd
        self.max_seen_usd = cost_usd if self.max_seen_usd is None else max(self.max_seen_usd, cost_usd)

    @property
    def waiting_possible(self) -> bool:
        """True when a refused task could fit later (others are still running)."""
        return self.in_flight > 0

    def to_dict(self) -> dict[str, object]:
        return {
            "total_usd": self.total_usd,
            "per_task_usd": self.per_task_usd,
            "spent_known_usd": round(self.spent_usd, 6),
            "tasks_with_known_cost": self.known_tasks,
            "tasks_with_unknown_cost": self.unknown_tasks,
            "tasks_not_started_for_budget": self.refused,
            "note": (f"{self.unknown_tasks} task(s) reported no cost: their spend is unknown and not counted"
                     if self.unknown_tasks else None),
        }
