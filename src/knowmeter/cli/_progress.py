"""Live progress of ``eval`` on stderr: a redrawn bar on a terminal (without escape sequences on
``TERM=dumb``), a plain line every ``interval`` seconds otherwise, nothing with ``--quiet``.
``tick`` runs once per finished task in the runner's event loop, so it only adds numbers and
redraws at most ten times a second.

The bar's line fits the terminal's width (read at each redraw): a line that wrapped would leave a
stale row on every redraw, since a redraw clears only the row the cursor is on."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TextIO

if TYPE_CHECKING:
    from knowmeter.store import TaskRecord

#: a terminal bar is redrawn at most this often (seconds)
REDRAW_S = 0.1
#: without a terminal, one line this often (seconds)
LINE_INTERVAL_S = 10.0
BAR_WIDTH = 24
#: a narrower bar is left out (the counts say it all)
MIN_BAR_WIDTH = 6
Style = Literal["full", "compact", "short"]
#: the status line's forms, longest first
STYLES: tuple[Style, ...] = ("full", "compact", "short")


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
        #: a terminal without escape sequences (TERM=dumb: Emacs' shell, some CI logs): the bar is
        #: redrawn after a carriage return alone, padded over the longer line it replaces
        self.dumb = os.environ.get("TERM") == "dumb"
        self._drawn = 0
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

    def tick(self, record: TaskRecord) -> None:
        """One finished task (its stored record)."""
        self.done += 1
        if record.exec.error:
            self.failed += 1
        # a cached answer cost nothing in this run; its judges' calls did (a cached reply is 0)
        costs = [] if record.cached else [record.exec.cost_usd]
        if record.grade is not None:
            costs.append(record.grade.judge_cost_usd)
        if any(c is None for c in costs):
            self.cost_unknown_tasks += 1
        self.cost_known += sum(float(c) for c in costs if c is not None)
        if self.stream is not None and self.clock() >= self.next_draw:
            self._draw()

    def line(self, style: Style = "full") -> str:
        """The status as text: done/total, running (or done / stopped once the tasks stopped),
        failures, elapsed, ETA, cost; ``compact`` in fewer words, ``short`` without what is
        running and the elapsed time (for a narrow terminal)."""
        elapsed = self.clock() - self.started
        left = self.total - self.done
        eta = "" if self.stopped else f"ETA {_clock(elapsed / self.done * left) if self.done else 'unknown'}"
        if self.stopped:
            state = "done" if left <= 0 else f"stopped, {left} not run"
        elif self.concurrency > 1 and self.one_at_a_time():
            state = "1 at a time (budget)" if style != "full" else "running 1 (budget: one at a time)"
        else:
            state = f"running {min(self.concurrency, left)}"
        unknown = self.cost_unknown_tasks
        if style == "full":
            timing = f"{_clock(elapsed)} elapsed" + (f" · {eta}" if eta else "")
            cost = f"cost ${self.cost_known:.4f} known" + (f" + {unknown} task(s) unknown" if unknown else "")
            return f"{self.done}/{self.total} tasks · {state} · failed {self.failed} · {timing} · {cost}"
        cost = f"${self.cost_known:.4f}" + (f" + {unknown} unknown" if unknown else "")
        parts = [f"{self.done}/{self.total}", state, f"{self.failed} failed", _clock(elapsed), eta, cost]
        if style == "short":  # what runs matters only while the budget holds calls back
            state = "1 at a time" if state.startswith("1 at a time") else state if self.stopped else ""
            parts = [parts[0], state, parts[2], eta, cost]
        return " · ".join(p for p in parts if p)

    def bar_line(self, columns: int) -> str:
        """The bar and the status in at most ``columns - 1`` characters (the last column stays
        free: a terminal that wraps there would add a row): the longest status that leaves room
        for a bar of at least ``MIN_BAR_WIDTH``, else the shortest alone, cut with … when even
        that is too wide."""
        room = columns - 1
        text = ""
        for style in STYLES:
            text = self.line(style)
            width = min(BAR_WIDTH, room - len(text) - 1)
            if width >= MIN_BAR_WIDTH:
                filled = width * self.done // self.total if self.total else width
                return "█" * filled + "░" * (width - filled) + " " + text
        return text if len(text) <= room else text[: max(room - 1, 0)] + "…"

    def _columns(self) -> int:
        """The stream's terminal width now (it may have been resized); COLUMNS or 80 when unknown."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):
            columns = 0
        return columns or shutil.get_terminal_size().columns

    def _draw(self) -> None:
        assert self.stream is not None
        self.next_draw = self.clock() + self.interval
        if self.tty and self.dumb:
            bar = self.bar_line(self._columns())
            self.stream.write(f"\r{bar.ljust(self._drawn)}")
            self._drawn = len(bar)
        elif self.tty:
            self.stream.write(f"\r\x1b[2K{self.bar_line(self._columns())}")
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
