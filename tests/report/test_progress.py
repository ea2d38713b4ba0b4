"""Live progress: counts, cost known / unknown, ETA, throttling, a bar on a terminal (a real
pseudo-terminal), plain lines otherwise, and --quiet printing only the outcome line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowmeter.cli._progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _record(
    *, cost: float | None = 0.01, error: str | None = None, cached: bool = False, judge_cost: float | None = 0.0
) -> dict[str, object]:
    return {
        "exec": {"cost_usd": cost, "error": error},
        "cached": cached,
        "grade": None if error else {"judge_cost_usd": judge_cost},
    }


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


def test_terminal_bar_redraws_in_place_at_most_ten_times_a_second() -> None:
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
    assert "\r\x1b[2K" in err and "█" * 24 + " 46/46 tasks · done · failed 0" in err

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
