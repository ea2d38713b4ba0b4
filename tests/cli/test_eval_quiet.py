"""``eval --quiet`` prints only the outcome line — and, when the run is stopped, how to continue it
(its stderr console is made for the first line it prints, so a quiet run never imports rich
before its tasks). A real process and a real SIGTERM."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import init_demo, km_started
from tests.support.held import HELD_AGENT

pytestmark = pytest.mark.slow


def test_a_quiet_run_stopped_by_sigterm_says_only_how_to_continue(tmp_path: Path) -> None:
    demo = init_demo(tmp_path / "d")
    (demo / "agent.py").write_text(HELD_AGENT)
    (demo / "hold").touch()
    proc = km_started(
        "eval",
        *("--executor", f"{sys.executable} {demo / 'agent.py'}", "--concurrency", "1", "--no-cache", "--quiet"),
        cwd=demo,
        env={**os.environ, "COLUMNS": "300"},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(
        len(r.read_text().splitlines()) >= 3 for r in demo.glob(".knowmeter/runs/*/results.jsonl")
    ):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    (demo / "hold").unlink()
    assert proc.returncode == 143, err
    run = next(demo.glob(".knowmeter/runs/*"))
    assert err.splitlines() == [
        f"interrupted by SIGTERM: 3/46 tasks are stored; continue with: knowmeter eval --resume {run.name}"
    ]
    assert out.startswith("INCOMPLETE · 3/46 tasks"), out
