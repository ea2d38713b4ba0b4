"""Live progress of ``eval`` on stderr: a redrawn bar on a terminal, a plain line every
``interval`` seconds otherwise, nothing with ``--quiet``. ``tick`` runs once per finished task
in the runner's event loop, so it only adds numbers and redraws at most ten times a second."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

#: a terminal bar is redrawn at most this often (seconds)
REDRAW_S = 0.1
#: without a terminal, one line this often (seconds)
LINE_INTERVAL_S = 10.0
BAR_WIDTH = 24


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """Counts finished tasks, failures and cost (known, and how many tasks' cost is unknown)."""

    def __init__(
        self,
        total: int,
        concurrency: int,
        stream: TextIO | None,
        *,
        tty: bool,
        interval: float = LINE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.concurrency = concurrency
        self.stream = stream
        self.tty = tty
        self.interval = REDRAW_S if tty else interval
        self.clock = clock
        self.started = clock()
        self.next_draw = self.started + (0.0 if tty else interval)
        self.done = 0
        self.failed = 0
        self.cost_known = 0.0
        self.cost_unknown_tasks = 0
        #: set by ``close``: the tasks stopped, none runs any more (whether all ran or not)
        self.stopped = False
        #: live: True while the run's budget starts calls one at a time (to learn a cost)
        self.one_at_a_time: Callable[[], bool] = lambda: False

    def tick(self, record: dict[str, Any]) -> None:
        """One finished task (its stored record)."""
        self.done += 1
        ex = record.get("exec") or {}
        if ex.get("error"):
            self.failed += 1
        # a cached answer cost nothing in this run; its judges' calls did (a cached reply is 0)
        costs = [] if record.get("cached") else [ex.get("cost_usd")]
        grade = record.get("grade")
        if grade is not None and "judge_cost_usd" in grade:
            costs.append(grade["judge_cost_usd"])
        if any(c is None for c in costs):
            self.cost_unknown_tasks += 1
        self.cost_known += sum(float(c) for c in costs if c is not None)
        if self.stream is not None and self.clock() >= self.next_draw:
            self._draw()

    def line(self) -> str:
        """The status as text: done/total, running (or done / stopped once the tasks stopped),
        failures, elapsed, ETA, cost."""
        elapsed = self.clock() - self.started
        left = self.total - self.done
        if self.stopped:
            state = "done" if left <= 0 else f"stopped, {left} not run"
        else:
            eta = _clock(elapsed / self.done * left) if self.done else "unknown"
            state = (
                "running 1 (budget: one at a time)"
                if self.concurrency > 1 and self.one_at_a_time()
                else f"running {min(self.concurrency, left)}"
            )
        cost = f"cost ${self.cost_known:.4f} known"
        if self.cost_unknown_tasks:
            cost += f" + {self.cost_unknown_tasks} task(s) unknown"
        timing = f"{_clock(elapsed)} elapsed" + ("" if self.stopped else f" · ETA {eta}")
        return f"{self.done}/{self.total} tasks · {state} · failed {self.failed} · {timing} · {cost}"

    def _draw(self) -> None:
        assert self.stream is not None
        self.next_draw = self.clock() + self.interval
        if self.tty:
            filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            self.stream.write(f"\r\x1b[2K{bar} {self.line()}")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """The final state (a terminal's bar ends its line)."""
        self.stopped = True
        if self.stream is None or not self.total:
            return
        self._draw()
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
