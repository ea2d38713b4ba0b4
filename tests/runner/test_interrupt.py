"""Issue 17 item 4: Ctrl-C keeps the finished tasks, prints the resume command and exits 130;
the run is listed as interrupted / INCOMPLETE, `report` says so (exit 1, no gap-rate nudge), and
--resume finishes it. A real process and a real SIGINT."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import init_demo, km, km_started
from tests.support.held import held_run

pytestmark = pytest.mark.slow

# The first three tasks answer at once; later ones stall while STALL_AFTER_THREE is set, so the
# run cannot finish before the test's SIGINT reaches it, however slowly the test polls.
SLOW_AGENT = """\
import json, os, sys, time
json.load(sys.stdin)
calls = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls")
with open(calls, "a") as fh:
    fh.write(".")
if os.environ.get("STALL_AFTER_THREE") and os.path.getsize(calls) > 3:
    time.sleep(600)
print(json.dumps({"output": "Refunds are possible within 30 days of purchase."}))
"""


def test_ctrl_c_keeps_the_tasks_prints_the_resume_command_and_exits_130(tmp_path: Path) -> None:
    init_demo(tmp_path / "d")
    demo = tmp_path / "d"
    (demo / "agent.py").write_text(SLOW_AGENT)
    proc = km_started(
        "eval",
        "--executor",
        f"{sys.executable} {demo / 'agent.py'}",
        "--concurrency",
        "1",
        "--no-cache",
        cwd=demo,
        env={**os.environ, "COLUMNS": "100", "STALL_AFTER_THREE": "1"},
    )
    results = list((demo / ".knowmeter" / "runs").glob("*/results.jsonl")) if (demo / ".knowmeter").exists() else []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        results = list((demo / ".knowmeter" / "runs").glob("*/results.jsonl")) if (demo / ".knowmeter").exists() else []
        if results and len(results[0].read_text().splitlines()) >= 3:
            break
        time.sleep(0.1)
    assert results, "the run never stored a task"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    run_id = results[0].parent.name
    assert f"continue with: knowmeter eval --resume {run_id}" in " ".join(err.split())
    assert "Aborted!" not in err
    assert out.startswith("INCOMPLETE · "), out
    stored = len(results[0].read_text().splitlines())
    assert 3 <= stored < 46

    listed = json.loads(km("runs", "--json", cwd=demo).stdout)[0]
    assert (listed["id"], listed["status"], listed["outcome"]) == (run_id, "interrupted", "INCOMPLETE")
    rep = km("report", run_id, cwd=demo)
    assert rep.returncode == 1
    assert rep.stdout.startswith(f"INCOMPLETE · {stored}/46 tasks"), rep.stdout

    done = km("eval", "--resume", run_id, cwd=demo)
    assert done.returncode in (0, 1), done.stderr
    assert "INCOMPLETE" not in done.stdout.splitlines()[0]
    listed = json.loads(km("runs", "--json", cwd=demo).stdout)[0]
    assert listed["status"] == "complete" and listed["tasks_done"] == 46


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_are_handled_like_ctrl_c_and_exit_128_plus_the_signal(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    demo = init_demo(tmp_path / "d")
    proc, run = held_run(demo)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    (demo / "hold").unlink()
    assert proc.returncode == code, err
    name = signum.name
    assert f"interrupted by {name}: 3/46 tasks are stored; continue with: knowmeter eval --resume {run.name}" in err
    assert out.startswith("INCOMPLETE · 3/46 tasks"), out
    assert (run / "report.json").is_file()
    listed = json.loads(km("runs", "--json", cwd=demo).stdout)[0]
    assert (listed["id"], listed["status"], listed["outcome"]) == (run.name, "interrupted", "INCOMPLETE")


def test_runs_lists_a_running_and_a_killed_run_before_they_have_an_index_row(tmp_path: Path) -> None:
    demo = init_demo(tmp_path / "d")
    proc, run = held_run(demo)
    try:
        running = json.loads(km("runs", "--json", cwd=demo).stdout)
        assert [(r["id"], r["status"], r["outcome"]) for r in running] == [(run.name, "running", "not decided yet")]
        assert running[0]["tasks_done"] >= 3 and running[0]["tasks_total"] == 46
    finally:
        proc.kill()
        proc.communicate(timeout=60)
        (demo / "hold").unlink()  # the stalled agent answers and exits
    stored = len((run / "results.jsonl").read_text().splitlines())
    listed = km("runs", cwd=demo)
    assert not (demo / ".knowmeter" / "runs" / run.name / "report.json").exists()
    assert f"{run.name} · " in listed.stdout and f" · killed · INCOMPLETE · {stored}/46 tasks" in listed.stdout
    assert f"stopped before it finished: continue with knowmeter eval --resume {run.name}" in listed.stdout
    assert km("report", run.name, cwd=demo).returncode == 1  # report.json and an index row: still killed
    reported = km("runs", cwd=demo)
    assert f" · killed · INCOMPLETE · {stored}/46 tasks" in reported.stdout, reported.stdout
    assert f"stopped before it finished: continue with knowmeter eval --resume {run.name}" in reported.stdout


def test_a_resume_after_kill_9_counts_what_the_killed_leg_spent(tmp_path: Path) -> None:
    """The killed leg recorded no spend; its stored results say what it was, and the budget of the
    resumed run counts it: room for one more $0.01 task, not for the whole run again."""
    demo = init_demo(tmp_path / "d")
    proc, run = held_run(demo)
    proc.kill()
    proc.communicate(timeout=60)
    (demo / "hold").unlink()
    stored = len((run / "results.jsonl").read_text().splitlines())
    total = round(0.01 * stored + 0.015, 4)
    r = km("eval", "--resume", run.name, "--budget-usd", str(total), "--json", cwd=demo)
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    budget = report["run"]["budget"]
    assert report["run"]["tasks_done"] == stored + 1 and report["decision"]["outcome"] == "INCOMPLETE"
    assert budget["spent_known_usd"] == pytest.approx(0.01 * (stored + 1)) and budget["spent_known_usd"] <= total
    assert budget["calls"]["agent"]["known_cost"] == stored + 1
    assert f"${0.01 * stored:.6f} over {stored} call(s) read back from results.jsonl" in budget["note"]
