"""A run is locked while it executes (a second --resume refuses in one line), and on read a
task stored twice counts once and unreadable lines are reported — both said in report.json."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import km, km_started

pytestmark = pytest.mark.slow

SLOW_AGENT = """\
import json, os, sys, time
json.load(sys.stdin)
while not os.path.exists(sys.argv[1]):  # the test lets the tasks finish once it has tried to resume
    time.sleep(0.05)
print(json.dumps({"output": "an answer", "costUSD": 0.0}))
"""


def test_a_second_resume_of_a_running_run_refuses(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps([{"sample_id": f"s{i}", "prompt": "p"} for i in range(10)]))
    (tmp_path / "agent.py").write_text(SLOW_AGENT)
    first = km_started(
        "eval",
        "--samples",
        "s.json",
        "--control",
        "baseline",
        "--concurrency",
        "1",
        "--executor",
        f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'go'}",
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        while not list((tmp_path / ".knowmeter" / "runs").glob("*/.lock")):
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.1)
        second = km("eval", "--resume", "latest", cwd=tmp_path)
        assert second.returncode == 2, second.stderr
        assert second.stderr.count("\n") == 1 and "is being executed by another knowmeter process (pid" in second.stderr
    finally:
        (tmp_path / "go").touch()
        first.communicate(timeout=120)
    assert first.returncode in (0, 1)
    results = next((tmp_path / ".knowmeter" / "runs").glob("*/results.jsonl")).read_text().splitlines()
    assert len(results) == 10 == len({json.loads(line)["task_id"] for line in results})
    again = km("eval", "--resume", "latest", cwd=tmp_path)  # the lock went with the process
    assert again.returncode in (0, 1) and "0 of 10 tasks left" in again.stderr


def test_duplicates_and_half_lines_are_counted_once_and_reported(demo: Path, tmp_path: Path) -> None:
    import shutil

    p = tmp_path / "d"
    shutil.copytree(demo, p, ignore=shutil.ignore_patterns(".knowmeter"))
    assert km("eval", "--report-only", "--bootstrap-samples", "200", cwd=p).returncode == 0
    run_dir = next((p / ".knowmeter" / "runs").iterdir())
    lines = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    damaged = [*lines, lines[0], lines[1], lines[2][: len(lines[2]) // 2] + "\n", lines[3][:40]]
    (run_dir / "results.jsonl").write_text("".join(damaged))
    r = km("report", "latest", "--json", "--report-only", "--bootstrap-samples", "200", cwd=p)
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)["run"]
    assert run["tasks_done"] == len(lines) == run["tasks_total"]
    problems = run["results_problems"]
    assert any("2 duplicate record(s) of 2 task(s)" in x for x in problems)
    assert any(f"line {len(lines) + 3}: not valid JSON" in x for x in problems)
    assert any(f"line {len(lines) + 4}: cut off" in x for x in problems)
