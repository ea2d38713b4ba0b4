"""Cost budget over every model call of a run (agent, judges, graders, hedging classifier), over
every leg of a resumed run: a call starts only when its reservation fits in what is left, unknown
costs are counted as unknown, invalid costs are rejected. A call's cost is known only after it
ran, so one that cost more than was reserved for it can exceed the total: that is recorded. With a
total, every reservation and settlement is written to the run's ledger before the call goes on, so
a leg killed with calls in flight leaves them for the next leg to charge."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from knowmeter.executors import ExecRequest, ExecResult, Executor, ExecutorError, ExecutorWrapper
from knowmeter.runner._ledger import LEDGER_FILE, Ledger, StoredSpend, read_ledger
from knowmeter.store import BudgetStatus

#: A reservation is this many times the highest cost seen so far (for calls of the same kind),
#: so costs that rise during a run still stay under the total.
HEADROOM = 1.5


class BudgetExhausted(ExecutorError):
    """A model call was not made: it would not fit in what is left of the budget."""


def invalid_cost(cost: float | None) -> str | None:
    """Why a reported cost cannot be booked (not finite, negative), or None when it can."""
    if cost is None:
        return None
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0:
        return f"the executor reported cost {cost!r}: a cost must be a finite number >= 0"
    return None


@dataclass
class _Calls:
    known: int = 0
    unknown: int = 0
    spent_usd: float = 0.0
    max_seen_usd: float | None = None


@dataclass
class Budget:
    """Tracks spend against ``total_usd`` over every model call of a run.

    A call may start only when its reservation still fits: for agent tasks the per-task cap when
    one is set, otherwise ``HEADROOM`` × the highest cost seen so far for calls of the same kind
    ("agent", "judge", "hedging", …). Until every expected kind (and the call's own) has a known
    cost, calls run one at a time, so the first costs are learned before money is committed in
    parallel (a first call's own cost cannot be bounded in advance; an agent gets the per-task cap
    when one is set). Kinds in ``free`` (a non-LLM agent or judge) are known to cost nothing: never
    learned, never refused for lack of money. A call whose cost the executor did not report counts
    as *unknown*: it is not added as 0, and the report says the budget could not account for it. A
    call that cost more than was reserved for it is recorded as an overshoot. With ``ledger`` set,
    each reservation is written down before its call starts and settled when it ends (``key``
    names the call), so calls a killed leg left in flight are charged by the next one
    (``continue_after_kill``).
    """

    total_usd: float | None = None
    per_task_usd: float | None = None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    in_flight: int = 0
    refused: int = 0
    overshoot_usd: float = 0.0
    #: set when a grading call was refused: no further task starts (it could not be graded)
    exhausted: bool = False
    calls: dict[str, _Calls] = field(default_factory=dict)
    #: kinds of call the run will make ("agent", "judge", …): until each has a known cost, calls
    #: run one at a time
    expected: frozenset[str] = frozenset({"agent"})
    #: kinds of call known to cost nothing (the executor is no model)
    free: frozenset[str] = frozenset()
    #: calls started one at a time because a cost they needed was not known yet
    one_at_a_time: int = 0
    #: spend (and calls) a killed leg never recorded, read back from the stored results
    unrecorded_usd: float = 0.0
    unrecorded_calls: int = 0
    #: calls in flight when a leg was killed, charged by a later leg: how many, the sum charged,
    #: and how many of them at an unknown cost (no reservation, no known cost of their kind)
    in_flight_calls: int = 0
    in_flight_usd: float = 0.0
    in_flight_unknown: int = 0
    ledger: Ledger | None = None
    #: lines of the ledger that could not be read
    ledger_problems: list[str] = field(default_factory=list)
    _freed: anyio.Event | None = None

    @property
    def charged_usd(self) -> float:
        """What counts against the total: the known spend and the charges for calls in flight
        when a leg was killed."""
        return self.spent_usd + self.in_flight_usd

    def _seen(self, kind: str) -> float | None:
        calls = self.calls.get(kind)
        if calls is not None and calls.max_seen_usd is not None:
            return calls.max_seen_usd
        return 0.0 if kind in self.free else None

    def _estimate(self, kind: str) -> float | None:
        if kind == "agent" and self.per_task_usd is not None:
            return self.per_task_usd
        seen = self._seen(kind)
        return None if seen is None else seen * HEADROOM

    def _learning(self, kind: str = "agent") -> bool:
        return any(self._seen(k) is None for k in self.expected | {kind})

    @property
    def one_at_a_time_now(self) -> bool:
        """True while calls start one at a time: a total is set and the cost of some kind of call
        the run makes is not known yet."""
        return self.total_usd is not None and not self.exhausted and self._learning()

    def try_reserve(self, kind: str = "agent", key: str = "") -> float | None:
        """Reserve room for one call (``key``: its name in the ledger, default its kind); returns
        the amount reserved, or None when it doesn't fit. The call may start once ``on_disk``
        returned."""
        if self.total_usd is None:
            self.in_flight += 1
            return 0.0
        if self.exhausted:
            return None
        estimate = self._estimate(kind)
        learning = self._learning(kind)
        if learning and (self.in_flight > 0 or self.charged_usd >= self.total_usd):
            return None
        estimate = estimate or 0.0
        if self.charged_usd + self.reserved_usd + estimate > self.total_usd + 1e-12:
            return None
        if self.ledger is not None:
            self.ledger.reserve(key or kind, kind, estimate)
        self.one_at_a_time += learning
        self.reserved_usd += estimate
        self.in_flight += 1
        return estimate

    def settle(self, reserved: float, cost_usd: float | None, kind: str = "agent", key: str = "") -> None:
        """Release a reservation and book the call's actual cost (``None``: unknown); ``key`` as
        for ``try_reserve``."""
        if self.ledger is not None:
            self.ledger.settle(key or kind, cost_usd)
        self.reserved_usd -= reserved
        self.in_flight -= 1
        calls = self.calls.setdefault(kind, _Calls())
        if cost_usd is None:
            calls.unknown += 1
        else:
            calls.known += 1
            calls.spent_usd += cost_usd
            self.spent_usd += cost_usd
            if self.total_usd is not None and cost_usd > reserved and self.charged_usd > self.total_usd:
                self.overshoot_usd = self.charged_usd - self.total_usd
            calls.max_seen_usd = cost_usd if calls.max_seen_usd is None else max(calls.max_seen_usd, cost_usd)
        if self._freed is not None:
            self._freed.set()
            self._freed = None

    @property
    def waiting_possible(self) -> bool:
        """True when a refused call could fit later (others are still running)."""
        return self.in_flight > 0

    async def wait_for_room(self) -> None:
        """Wait until some call in flight settles."""
        if self._freed is None:
            self._freed = anyio.Event()
        await self._freed.wait()

    async def reserve(self, kind: str, key: str = "") -> float | None:
        """Reserve room for one call, waiting while calls in flight may free some (and, with a
        ledger, until the reservation is on disk); None when the call can never fit."""
        while True:
            reserved = self.try_reserve(kind, key)
            if reserved is not None:
                await self.on_disk()
                return reserved
            if not self.waiting_possible:
                return None
            await self.wait_for_room()

    async def on_disk(self) -> None:
        """Wait until the reservations made so far are on disk (at once without a ledger): a call
        starts only then, so a leg killed during it leaves it charged."""
        if self.ledger is not None:
            await self.ledger.on_disk()

    def continue_from(self, earlier: BudgetStatus) -> None:
        """Count what earlier legs of the run spent (their ``record``, from run.json)
        against this budget, so a resumed run has one budget and one record that adds up. The
        number of tasks the budget did not start is this leg's alone (those tasks run again)."""
        for kind, spent in earlier.calls.items():
            calls = self.calls.setdefault(kind, _Calls())
            calls.known += spent.known_cost
            calls.unknown += spent.unknown_cost
            calls.spent_usd += spent.spent_known_usd
            calls.max_seen_usd = spent.max_cost_usd
        self.spent_usd += earlier.spent_known_usd
        self.one_at_a_time += earlier.calls_one_at_a_time
        self.in_flight_calls += earlier.in_flight_calls
        self.in_flight_usd += earlier.in_flight_charged_usd
        self.in_flight_unknown += earlier.in_flight_unknown_cost
        if earlier.overshoot_usd and self.total_usd is not None:
            self.overshoot_usd = max(0.0, self.charged_usd - self.total_usd)

    def add_unrecorded(self, stored: Mapping[str, StoredSpend]) -> None:
        """Count what the stored results (or the ledger) hold beyond this budget's record
        (``continue_from``): a leg killed before it recorded its spend (``kill -9``) left only
        those; their highest cost of a kind sizes the next reservations of that kind."""
        for kind, spend in stored.items():
            calls = self.calls.setdefault(kind, _Calls())
            known, unknown = max(0, spend.known - calls.known), max(0, spend.unknown - calls.unknown)
            spent = max(0.0, spend.spent_usd - calls.spent_usd)
            calls.known += known
            calls.unknown += unknown
            calls.spent_usd += spent
            if spend.max_usd is not None:
                calls.max_seen_usd = max(calls.max_seen_usd or 0.0, spend.max_usd)
            self.spent_usd += spent
            self.unrecorded_usd += spent
            self.unrecorded_calls += known + unknown

    def continue_after_kill(self, stored: Mapping[str, StoredSpend], run_path: Path) -> None:
        """Count what legs killed before they recorded their spend left behind (after
        ``continue_from``): per kind, what the stored results (``stored``) or the run's ledger
        say, whichever says more (the ledger also holds calls stored nowhere else: the hedging
        classifier's, those of a task killed while graded); the charges a killed leg made for calls
        in flight; and the calls still open in the ledger — in flight when their leg died —, each
        charged at its reservation (at ``HEADROOM`` × the highest known cost of its kind when it
        had none; at an unknown cost when none is known), the charge written to the ledger."""
        state = read_ledger(run_path)
        self.ledger_problems = state.problems
        kinds = {*stored, *state.settled}
        self.add_unrecorded({kind: _most(stored.get(kind), state.settled.get(kind)) for kind in kinds})
        for usd in state.charged[self.in_flight_calls :]:  # a later leg's record holds the earlier ones
            self._charge_in_flight(usd)
        if not state.open:
            return
        ledger = Ledger(run_path)
        try:
            for call in state.open:
                seen = self._seen(call.kind)
                usd = call.usd or (None if seen is None else seen * HEADROOM)
                ledger.charged(call, usd)
                self._charge_in_flight(usd)
        finally:
            ledger.close()

    def _charge_in_flight(self, usd: float | None) -> None:
        self.in_flight_calls += 1
        if usd is None:
            self.in_flight_unknown += 1
        else:
            self.in_flight_usd += usd

    def record(self) -> BudgetStatus:
        """``to_dict`` as run.json's ``budget`` block."""
        return BudgetStatus.model_validate(self.to_dict())

    def to_dict(self) -> dict[str, object]:
        agent = self.calls.get("agent", _Calls())
        unknown = sum(c.unknown for c in self.calls.values())
        notes = []
        if self.unrecorded_usd or self.unrecorded_calls:
            notes.append(
                f"a leg killed before it recorded its spend: ${self.unrecorded_usd:.6f} over "
                f"{self.unrecorded_calls} call(s) read back from results.jsonl and {LEDGER_FILE} (kept when a "
                "total is set; without it, calls that store no cost in results.jsonl, such as the hedging "
                "classifier's, are not counted)"
            )
        if self.in_flight_calls:
            notes.append(
                f"{self.in_flight_calls} call(s) were in flight when a leg was killed: charged at their "
                f"reservation ${self.in_flight_usd:.6f}; their real cost is unknown"
                + (
                    f" ({self.in_flight_unknown} of them had no reservation and no cost of their kind was known: "
                    "counted as unknown, not charged)"
                    if self.in_flight_unknown
                    else ""
                )
            )
        notes.extend(f"{problem}: not counted" for problem in self.ledger_problems)
        if unknown:
            notes.append(f"{unknown} model call(s) reported no cost: their spend is unknown and not counted")
        if self.overshoot_usd:
            notes.append(
                f"a call cost more than was reserved for it: the total was exceeded by ${self.overshoot_usd:.6f}"
            )
        return {
            "total_usd": self.total_usd,
            "per_task_usd": self.per_task_usd,
            "spent_known_usd": round(self.spent_usd, 6),
            "tasks_with_known_cost": agent.known,
            "tasks_with_unknown_cost": agent.unknown,
            "tasks_not_started_for_budget": self.refused,
            "calls": {
                kind: {
                    "known_cost": c.known,
                    "unknown_cost": c.unknown,
                    "spent_known_usd": round(c.spent_usd, 6),
                    "max_cost_usd": c.max_seen_usd,
                }
                for kind, c in sorted(self.calls.items())
            },
            "calls_one_at_a_time": self.one_at_a_time,
            "in_flight_calls": self.in_flight_calls,
            "in_flight_charged_usd": round(self.in_flight_usd, 6),
            "in_flight_unknown_cost": self.in_flight_unknown,
            "overshoot_usd": round(self.overshoot_usd, 6) if self.overshoot_usd else None,
            "note": "; ".join(notes) or None,
        }


def budget_warnings(record: Mapping[str, Any], concurrency: int | None = None) -> list[str]:
    """What a budget (its ``Budget.to_dict`` record) could not do, one line each: hold its total
    (a call's cost is known only after it ran), count calls that reported no cost, run calls at
    ``concurrency`` (the run's setting; None: not a concurrent run). Nothing without a total."""
    if record.get("total_usd") is None:
        return []
    total = f"budget ${record['total_usd']:g}"
    warnings = []
    if record.get("overshoot_usd"):
        warnings.append(
            f"{total} exceeded: ${record['spent_known_usd']:.4f} spent (a call's cost is known only after it ran, "
            "and one cost more than was reserved for it)"
        )
    if record.get("in_flight_calls"):
        unknown_in_flight = record.get("in_flight_unknown_cost") or 0
        warnings.append(
            f"{total}: {record['in_flight_calls']} call(s) in flight when a leg was killed were charged "
            f"${record.get('in_flight_charged_usd') or 0.0:.4f} at their reservation; their real cost is unknown"
            + (f" ({unknown_in_flight} not charged: no cost of their kind was known)" if unknown_in_flight else "")
        )
    kinds = record.get("calls") or {}
    calls = sum(c["known_cost"] + c["unknown_cost"] for c in kinds.values())
    unknown = sum(c["unknown_cost"] for c in kinds.values())
    if unknown == calls > 0:
        warnings.append(f"{total} could not be enforced: none of the {calls} model call(s) reported its cost")
    elif unknown:
        warnings.append(
            f"{total} counts only known costs: {unknown} of {calls} model call(s) reported no cost "
            "(their spend is unknown)"
        )
    # the first call of each kind always runs alone, to learn its cost; more ran alone only
    # because costs went unreported
    alone = record.get("calls_one_at_a_time") or 0
    if concurrency is not None and concurrency > 1 and alone > len(kinds):
        warnings.append(
            f"{total}: {alone} model call(s) ran one at a time, not {concurrency} at once "
            "(a reservation cannot be sized before a cost of that kind of call is known)"
        )
    return warnings


class MeteredExecutor(ExecutorWrapper):
    """An executor whose every call is charged to a ``Budget`` (judges, graders, the hedging
    classifier): a call that cannot fit raises ``BudgetExhausted``, a call reporting a
    non-finite or negative cost raises ``ExecutorError``."""

    def __init__(self, inner: Executor, budget: Budget, kind: str) -> None:
        super().__init__(inner)
        self.budget = budget
        self.kind = kind
        self._calls = 0

    async def run(self, request: ExecRequest) -> ExecResult:
        self._calls += 1
        key = f"{self.kind}:{request.task_id}:{self._calls}"
        reserved = await self.budget.reserve(self.kind, key)
        if reserved is None:
            self.budget.exhausted = True
            total = self.budget.total_usd
            raise BudgetExhausted(
                f"not called: the budget (${total:g}) is spent (${self.budget.spent_usd:.4f} known so far)"
            )
        cost: float | None = 0.0 if self.inner.non_llm else None  # a non-LLM "model" costs nothing
        try:
            result = await self.inner.run(request)
            problem = invalid_cost(result.cost_usd)
            if problem is not None:
                raise ExecutorError(problem)
            if result.cost_usd is not None:
                cost = result.cost_usd
            return result
        finally:
            self.budget.settle(reserved, cost, self.kind, key)


def _most(a: StoredSpend | None, b: StoredSpend | None) -> StoredSpend:
    """Per figure, the larger of two accounts of one kind's spend (either may be missing)."""
    a, b = a or StoredSpend(), b or StoredSpend()
    highs = [m for m in (a.max_usd, b.max_usd) if m is not None]
    return StoredSpend(
        max(a.known, b.known), max(a.unknown, b.unknown), max(a.spent_usd, b.spent_usd), max(highs, default=None)
    )
