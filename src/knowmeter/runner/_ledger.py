"""The budget's ledger, ``budget.jsonl`` in the run directory: one line when a model call is
charged before it starts (``reserve``; the call waits until it is on disk), one when it ends
(``settle``: its cost, or null when unknown), and one when a later leg charges a call that was in
flight when its leg died (``charged``). A leg killed with ``kill -9`` leaves its calls in flight as
reservations without a settle, so the next leg can count them. Append-only; a line cut short by a
kill is skipped and said.

Every line is flushed at once (a kill loses no flushed line); the fsync that makes reservations
survive the machine runs in a worker thread, one for all the calls waiting on it, so the event loop
never waits on the disk. A settle is not fsynced: one lost with the machine leaves its call charged
at its reservation instead of its cost."""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio

LEDGER_FILE = "budget.jsonl"


@dataclass(frozen=True)
class StoredSpend:
    """What a run's stored results (or its ledger) say one kind of call spent: calls (or tasks,
    for kinds that store one total per task) with a known and an unknown cost, the known spend,
    and the highest known cost of one call (None: not known from this source)."""

    known: int = 0
    unknown: int = 0
    spent_usd: float = 0.0
    max_usd: float | None = None


@dataclass(frozen=True)
class Reservation:
    """A call charged before it started: its key, kind and the amount reserved for it."""

    key: str
    kind: str
    usd: float


@dataclass
class LedgerState:
    """What a run's ledger holds: the settled calls per kind, the calls still open (in flight when
    their leg died, never charged since), the charges later legs made for such calls (``None``:
    charged at an unknown cost), and why lines were skipped."""

    settled: dict[str, StoredSpend] = field(default_factory=dict)
    open: list[Reservation] = field(default_factory=list)
    charged: list[float | None] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class Ledger:
    """Appends the budget's lines to ``budget.jsonl`` in ``run_path``, each one flushed at once (a
    charge also fsynced; a reservation once ``on_disk`` is awaited); the file is opened at the
    first line."""

    def __init__(self, run_path: Path) -> None:
        self.path = run_path / LEDGER_FILE
        self._fh: IO[bytes] | None = None
        self._written = 0  # lines written, and of them the first ones known to be on disk
        self._synced = 0
        self._syncing: anyio.Event | None = None

    def reserve(self, key: str, kind: str, usd: float) -> None:
        """A call of ``kind`` is about to start with ``usd`` reserved for it (``on_disk`` before it does)."""
        self._write({"reserve": key, "kind": kind, "usd": usd})

    async def on_disk(self) -> None:
        """Wait until every line written so far is on disk: an fsync in a worker thread, shared by
        the calls that wait for it at the same time."""
        target = self._written
        while self._synced < target and self._fh is not None:
            if self._syncing is not None:
                await self._syncing.wait()
                continue
            self._syncing = syncing = anyio.Event()
            upto = self._written
            try:
                await anyio.to_thread.run_sync(os.fsync, self._fh.fileno())
                self._synced = max(self._synced, upto)
            finally:
                self._syncing = None
                syncing.set()

    def settle(self, key: str, cost_usd: float | None) -> None:
        """The call ``key`` ended, costing ``cost_usd`` (None: unknown)."""
        self._write({"settle": key, "usd": cost_usd})

    def charged(self, call: Reservation, usd: float | None) -> None:
        """``call``, in flight when its leg died, is now charged ``usd`` (None: an unknown cost)."""
        self._write({"charged": call.key, "kind": call.kind, "usd": usd}, durable=True)

    def _write(self, line: dict[str, Any], *, durable: bool = False) -> None:
        if self._fh is None:
            self._fh = self.path.open("a+b")
            size = self._fh.seek(0, os.SEEK_END)
            if size:
                self._fh.seek(size - 1)
                if self._fh.read(1) != b"\n":
                    self._fh.write(b"\n")  # end a line a kill cut short: it stays skipped, the next is whole
        self._fh.write(json.dumps(line).encode() + b"\n")
        self._fh.flush()
        self._written += 1
        if durable:
            os.fsync(self._fh.fileno())
            self._synced = self._written

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_ledger(run_path: Path) -> LedgerState:
    """The ledger of the run in ``run_path`` (empty when it has none). A settle or charge closes
    the oldest open reservation with its key; a line that is no JSON object of the three kinds is
    skipped and named in ``problems``."""
    state = LedgerState()
    path = run_path / LEDGER_FILE
    if not path.is_file():
        return state
    open_calls: defaultdict[str, deque[Reservation]] = defaultdict(deque)
    costs: defaultdict[str, list[float | None]] = defaultdict(list)  # of the settled calls, per kind
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        line = _parse(raw)
        if line is None:
            if raw.strip():
                state.problems.append(f"{LEDGER_FILE} line {number} is damaged (cut short when a leg was killed?)")
            continue
        key, usd = str(line.get("reserve", line.get("settle", line.get("charged")))), line["usd"]
        if "reserve" in line:
            open_calls[key].append(Reservation(key, str(line["kind"]), usd or 0.0))
            continue
        call = open_calls[key].popleft() if open_calls[key] else None
        if "charged" in line:
            state.charged.append(usd)
        elif call is not None:
            costs[call.kind].append(usd)
    state.settled = {kind: _spend(kind_costs) for kind, kind_costs in costs.items()}
    state.open = [call for calls in open_calls.values() for call in calls]
    return state


def _spend(costs: list[float | None]) -> StoredSpend:
    known = [cost for cost in costs if cost is not None]
    return StoredSpend(len(known), len(costs) - len(known), sum(known), max(known, default=None))


def _parse(raw: bytes) -> dict[str, Any] | None:
    """One ledger line, or None when it is not one (damaged, cut short, unknown)."""
    try:
        line = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(line, dict) or sum(k in line for k in ("reserve", "settle", "charged")) != 1:
        return None
    usd = line.get("usd")
    if usd is not None and (isinstance(usd, bool) or not isinstance(usd, int | float) or not 0 <= usd < math.inf):
        return None
    if ("settle" not in line and not isinstance(line.get("kind"), str)) or "usd" not in line:
        return None
    return line
