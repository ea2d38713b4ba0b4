"""Live progress: counts, cost known / unknown, ETA, throttling, a bar on a terminal (a real
pseudo-terminal), plain lines otherwise, and --quiet printing only the outcome line."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from knowmeter.cli._progress import Progress
from knowmeter.demo import scaffold
from knowmeter.store import Grade, TaskRecord
from tests.support.records import task_record


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _record(
    *, cost: float | None = 0.01, error: str | None = None, cached: bool = False, judge_cost: float | None = 0.0
) -> TaskRecord:
    grade = None if error else Grade(judge_cost_usd=judge_cost)
    return task_record(cost=cost, error=error, cached=cached, grade=grade)


def test_plain_lines_every_interval_with_counts_cost_and_eta() -> None:
    clock, out = Clock(), io.StringIO()
    p = Progress(10, 4, out, tty=False, interval=10.0, clock=clock)
    clock.now += 2
    p.tick(_record())
    assert out.getvalue() == ""  # not yet 10 s
    clock.now += 9
    p.tick(_record(cost=None))  # unknown agent cost
    p.tick(_record(error="executor error: boom", cost=None))
    clock.now += 1
    p.tick(_record(judge_cost=None))  # the judge's cost unknown
    p.tick(_record(cached=True, cost=0.5))  # a cached answer cost nothing in this run
    lines = out.getvalue().splitlines()
    assert lines == [
        "2/10 tasks · running 4 · failed 0 · 0:11 elapsed · ETA 0:44 · cost $0.0100 known + 1 task(s) unknown"
    ]
    clock.now += 30
    p.close()
    assert out.getvalue().splitlines()[-1] == (
        "5/10 tasks · stopped, 5 not run · failed 1 · 0:42 elapsed · cost $0.0200 known + 3 task(s) unknown"
    )  # closed: nothing runs any more, no ETA


def test_while_the_budget_keeps_calls_one_at_a_time_the_line_says_so() -> None:
    clock, out = Clock(), io.StringIO()
    alone = True
    p = Progress(10, 4, out, tty=False, interval=10.0, clock=clock)
    p.one_at_a_time = lambda: alone
    clock.now += 10
    p.tick(_record())
    alone = False  # a cost of every kind is known now: calls run 4 at once
    clock.now += 10
    p.tick(_record())
    assert [line.split(" · ")[1] for line in out.getvalue().splitlines()] == [
        "running 1 (budget: one at a time)",
        "running 4",
    ]
    single = Progress(10, 1, None, tty=False)
    single.one_at_a_time = lambda: True
    assert " · running 1 · " in single.line()  # one at a time anyway: nothing to explain


def test_a_judge_called_on_a_cached_answer_is_counted() -> None:
    """The answer came from the cache (it cost nothing now) but the judge ran: its cost is
    spent in this run, as run.budget counts it."""
    out = io.StringIO()
    p = Progress(2, 1, out, tty=False, interval=0.0, clock=Clock())
    p.tick(_record(cached=True, cost=0.5, judge_cost=0.0004))
    p.tick(_record(cached=True, cost=0.5, judge_cost=None))
    assert p.line().endswith("cost $0.0004 known + 1 task(s) unknown")


def test_terminal_bar_redraws_in_place_at_most_ten_times_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a stream that is no terminal: the width COLUMNS gives
    clock, out = Clock(), io.StringIO()
    p = Progress(4, 2, out, tty=True, clock=clock)
    p.tick(_record())
    p.tick(_record())  # same instant: no redraw
    assert out.getvalue().count("\r") == 1
    clock.now += 0.2
    p.tick(_record())
    p.close()
    frames = out.getvalue().split("\r\x1b[2K")[1:]
    assert len(frames) == 3 and out.getvalue().endswith("\n")
    assert frames[-1].startswith("█" * 18 + "░" * 6 + " 3/4 tasks · stopped, 1 not run")
    assert frames[0].startswith("█" * 6 + "░" * 18 + " 1/4 tasks")


def test_on_a_dumb_terminal_the_bar_is_redrawn_without_escape_sequences(monkeypatch: pytest.MonkeyPatch) -> None:
    """TERM=dumb shows ``ESC[2K`` as text: the bar is redrawn after a carriage return alone, the
    shorter line padded over the longer one it replaces."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TERM", "dumb")
    clock, out = Clock(), io.StringIO()
    p = Progress(4, 2, out, tty=True, clock=clock)
    p.tick(_record())
    clock.now += 0.2
    p.tick(_record())
    p.close()
    text = out.getvalue()
    assert "\x1b" not in text and text.endswith("\n")
    frames = text.rstrip("\n").split("\r")[1:]
    assert len(frames) == 3 and len(frames[2]) == len(frames[1]) >= len(frames[0])
    assert frames[-1].endswith("known  ") and "2/4 tasks · stopped, 2 not run" in frames[-1]  # (padded)


@pytest.mark.parametrize("columns", [200, 120, 100, 80, 60, 40, 20, 3])
@pytest.mark.parametrize("budget", [False, True])
def test_the_bar_line_fits_the_terminal_width(columns: int, budget: bool) -> None:
    clock = Clock()
    p = Progress(1200, 16, None, tty=True, clock=clock)
    p.one_at_a_time = lambda: budget
    for i in range(1000):
        p.tick(_record(cost=None, error="boom" if i % 4 else None))
    clock.now += 4000
    line = p.bar_line(columns)
    assert len(line) <= columns - 1, line  # the last column stays free: no wrap, no stale row
    if columns >= 80:  # 80 columns still hold a bar, the counts, the failures, the ETA and both costs
        assert ("█" in line or budget) and "1000/1200" in line and "ETA 13:20" in line
        assert "750 failed" in line or "failed 750" in line
        assert "$0.0000 + 1000 unknown" in line or "cost $0.0000 known + 1000 task(s) unknown" in line
        assert not budget or "1 at a time" in line or "budget: one at a time" in line
    if columns >= 140:
        assert line.endswith("1000/1200 tasks · " + p.line().split(" tasks · ", 1)[1])


def test_nothing_is_written_without_a_stream_and_an_empty_run_is_silent() -> None:
    p = Progress(0, 4, None, tty=False)
    p.tick(_record())
    p.close()
    out = io.StringIO()
    Progress(0, 4, out, tty=True).close()
    assert out.getvalue() == ""


@pytest.mark.slow
def test_eval_on_a_terminal_shows_the_bar_and_quiet_only_the_outcome(demo_run: Path) -> None:
    project = demo_run.parents[2]
    primary, secondary = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "knowmeter", "eval", "--report-only"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=secondary,
            text=True,
            timeout=300,
            check=False,
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                data = os.read(primary, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(primary)
    assert proc.returncode == 0
    err = b"".join(chunks).decode()
    assert "\r\x1b[2K" in err and "█ 46/46 tasks · done · failed 0" in err

    quiet = subprocess.run(
        [sys.executable, "-m", "knowmeter", "eval", "--quiet"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert quiet.returncode == 0 and quiet.stderr == ""
    latest = sorted((project / ".knowmeter" / "runs").iterdir())[-1]
    report = json.loads((latest / "report.json").read_text())
    assert quiet.stdout == report["decision"]["headline"] + "\n"


#: a script agent that reports no cost (the widest status line: every task's cost unknown)
NO_COST_AGENT = """\
import json, sys, time
json.load(sys.stdin)
time.sleep(0.02)
print(json.dumps({"output": "Refunds are possible within 30 days."}))
"""


def _screen(data: str, columns: int) -> list[str]:
    """The rows a terminal of ``columns`` shows for ``data`` (carriage return, clear line, new
    line and the wrap at the last column: what a redrawn bar needs)."""
    rows, col = [""], 0
    data = re.sub(r"\x1b\[2K", "\x00", data)
    for ch in data:
        if ch == "\r":
            col = 0
        elif ch == "\x00":
            rows[-1] = ""
        elif ch == "\n":
            rows.append("")
            col = 0
        else:
            if col == columns:  # the terminal wraps: the rest goes to a new row
                rows.append("")
                col = 0
            rows[-1] = rows[-1][:col].ljust(col) + ch + rows[-1][col + 1 :]
            col += 1
    return rows


@pytest.mark.slow
def test_eval_at_80_columns_redraws_one_row_without_stale_rows(tmp_path: Path) -> None:
    """A 138-task run (23 samples × 2 variants × 3 repeats) on an 80-column pseudo-terminal whose
    agent reports no cost: every redraw fits, so the screen keeps exactly one bar row."""
    project = tmp_path / "demo"
    scaffold(project)
    (project / "agent.py").write_text(NO_COST_AGENT)
    primary, secondary = os.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(primary, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "knowmeter", "eval", "--executor", f"{sys.executable} agent.py", "--repeat", "3"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=secondary,
            text=True,
            timeout=300,
            check=False,
            env=env,
        )
    finally:
        os.close(secondary)
        reader.join(timeout=10)
        os.close(primary)
    assert proc.returncode in (0, 1), proc.stdout[-2000:]
    err = b"".join(chunks).decode()
    frames = err.split("\r\x1b[2K")[1:]
    assert len(frames) >= 3, err[-2000:]  # it redrew
    assert all(len(f.rstrip("\r\n")) <= 79 for f in frames), max(frames, key=len)
    assert "138/138" in frames[-1] and "+ 138 unknown" in frames[-1]
    bars = [row for row in _screen(err, 80) if "░" in row or "█" in row]
    assert len(bars) == 1, bars  # no stale rows left by the redraws
