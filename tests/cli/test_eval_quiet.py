"""``eval --quiet`` prints only the outcome line — and, when the run is stopped, how to continue it
(its stderr console is made for the first line it prints, so a quiet run never imports rich
before its tasks). A real process and a real SIGTERM."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.support.cli import init_demo
from tests.support.held import held_run

pytestmark = pytest.mark.slow


def test_a_quiet_run_stopped_by_sigterm_says_only_how_to_continue(tmp_path: Path) -> None:
    demo = init_demo(tmp_path / "d")
    proc, run = held_run(demo, "--quiet", columns="300")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    (demo / "hold").unlink()
    assert proc.returncode == 143, err
    assert err.splitlines() == [
        f"interrupted by SIGTERM: 3/46 tasks are stored; continue with: knowmeter eval --resume {run.name}"
    ]
    assert out.startswith("INCOMPLETE · 3/46 tasks"), out
