"""A script agent a test can hold mid-run, to interrupt or kill the run at a known point."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.cli import km_started

__all__ = ["HELD_AGENT", "held_run"]

# Answers at once (for $0.01) while the file "hold" beside it is absent, else waits for it to go:
# the test holds the run mid-way, and lets a stalled agent finish (no orphan left) by deleting it.
HELD_AGENT = """\
import json, os, sys, time
json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "calls"), "a") as fh:
    fh.write(".")
while os.path.getsize(os.path.join(here, "calls")) > 3 and os.path.exists(os.path.join(here, "hold")):
    time.sleep(0.05)
print(json.dumps({"output": "Refunds are possible within 30 days of purchase.", "costUSD": 0.01}))
"""


def held_run(demo: Path, *flags: str, columns: str = "200") -> tuple[subprocess.Popen[str], Path]:
    """``knowmeter eval`` of the demo in ``demo`` with the held agent (and ``flags``), once it
    stored three tasks: the process and its run directory."""
    (demo / "agent.py").write_text(HELD_AGENT)
    (demo / "hold").touch()
    proc = km_started(
        "eval",
        *("--executor", f"{sys.executable} {demo / 'agent.py'}", "--concurrency", "1", "--no-cache", *flags),
        cwd=demo,
        env={**os.environ, "COLUMNS": columns},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        results = list(demo.glob(".knowmeter/runs/*/results.jsonl"))
        if results and len(results[0].read_text().splitlines()) >= 3:
            return proc, results[0].parent
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the run never stored three tasks")
