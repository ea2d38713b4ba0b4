"""Issue 16 items 2 and 4: ``knowmeter eval --backend ray`` on a real local Ray instance. The demo
gives the same verdict and statistics as the local backend; the cache serves a Ray run; a Ray
worker killed mid-task loses no task; a killed driver resumes and finishes each task once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.cluster.ray_support import RAY_ENV, km
from tests.support.cli import km_started

pytestmark = pytest.mark.ray

#: A script agent that logs which process ran it (its parent: the Ray worker) and takes a while.
SLOW_AGENT = """\
import json, os, sys, time
req = json.load(sys.stdin)
with open({log!r}, "a") as fh:
    fh.write(json.dumps({{"task": [req["prompt"], req["system"] is None], "worker": os.getppid()}}) + "\\n")
time.sleep(0.5)
print(json.dumps({{"output": "Refunds are possible within 30 days of purchase."}}))
"""


def _demo(root: Path) -> Path:
    assert km("init", "d", cwd=root).returncode == 0
    return root / "d"


def _slow_agent(demo: Path) -> tuple[str, Path]:
    log = demo.parent / "agent-starts.jsonl"
    (demo / "agent.py").write_text(SLOW_AGENT.format(log=str(log)))
    return f"{sys.executable} {demo / 'agent.py'}", log


def _results(demo: Path) -> tuple[Path, list[dict[str, Any]]]:
    (path,) = (demo / ".knowmeter" / "runs").glob("*/results.jsonl")
    return path, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _wait_for_results(demo: Path, proc: subprocess.Popen[str], at_least: int) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        runs = list((demo / ".knowmeter" / "runs").glob("*/results.jsonl")) if (demo / ".knowmeter").exists() else []
        if runs and len(runs[0].read_text().splitlines()) >= at_least:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the run never stored its first tasks")


def _ray_eval_started(demo: Path, agent: str, ray_address: str, *extra: str) -> subprocess.Popen[str]:
    """``knowmeter eval`` of the demo with ``agent`` on the Ray cluster, uncached, started in the
    background."""
    return km_started(
        "eval",
        "--executor",
        agent,
        "--no-cache",
        "--backend",
        "ray",
        "--ray-address",
        ray_address,
        *extra,
        cwd=demo,
        env=RAY_ENV,
    )


def _measured(report: dict[str, Any]) -> dict[str, Any]:
    """What a run measured: the statistics, comparisons, verdict, gaps, coverage, decision and the
    per-variant figures (run metadata — ids, times, wall clock — and the latency and cache hits
    that differ between any two runs left out)."""
    keys = ("statistics", "comparisons", "verdict", "gaps", "coverage", "decision")
    variants = [
        {k: v for k, v in variant.items() if k not in ("latency_ms", "cached")} for variant in report["variants"]
    ]
    return {"variants": variants, **{k: report[k] for k in keys}}


def test_demo_on_ray_gives_the_same_verdict_and_statistics_and_the_cache_serves_it(
    tmp_path: Path, ray_address: str
) -> None:
    demo = _demo(tmp_path)
    local = km("eval", "--json", "--report-only", "--no-cache", cwd=demo)
    assert local.returncode == 0, local.stderr
    on_ray = km("eval", "--json", "--report-only", "--backend", "ray", "--ray-address", ray_address, cwd=demo)
    assert on_ray.returncode == 0, on_ray.stderr
    local_report, ray_report = json.loads(local.stdout), json.loads(on_ray.stdout)
    assert ray_report["run"]["tasks_done"] == ray_report["run"]["tasks_total"] == 46
    assert not any(t.get("cached") for t in ray_report["tasks"])
    assert ray_report["decision"]["verdict"] == local_report["decision"]["verdict"]
    assert _measured(ray_report) == _measured(local_report)

    again = km("eval", "--json", "--report-only", "--backend", "ray", "--ray-address", ray_address, cwd=demo)
    assert again.returncode == 0, again.stderr
    cached = json.loads(again.stdout)
    assert all(t["cached"] for t in cached["tasks"]) and len(cached["tasks"]) == 46
    for key in ("statistics", "comparisons", "verdict", "gaps"):  # (a cached task's cost is not spent again)
        assert cached[key] == local_report[key], key


def test_a_ray_worker_killed_mid_task_loses_no_task(tmp_path: Path, ray_address: str) -> None:
    demo = _demo(tmp_path)
    agent, log = _slow_agent(demo)
    proc = _ray_eval_started(demo, agent, ray_address, "--retry", "0", "--report-only")
    _wait_for_results(demo, proc, at_least=2)
    # the Ray worker running the task that started last (its agent sleeps 0.5 s): kill it mid-task
    started = [json.loads(line) for line in log.read_text().splitlines()]
    victim = started[-1]
    worker = psutil.Process(victim["worker"])
    assert worker.name().startswith("ray::") or "ray::" in " ".join(worker.cmdline()), worker.cmdline()
    os.kill(victim["worker"], signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err

    _, records = _results(demo)
    ids = Counter(r["task_id"] for r in records)
    assert len(ids) == 46 and set(ids.values()) == {1}, "a task is missing or stored twice"
    assert [r["task_id"] for r in records if r["exec"]["error"]] == []
    starts = [json.loads(line) for line in log.read_text().splitlines()]
    rerun = [s for s in starts if s["task"] == victim["task"]]
    assert len(rerun) >= 2 and any(s["worker"] != victim["worker"] for s in rerun), (
        "the killed worker's task was not run again by another worker"
    )


def test_a_killed_ray_driver_resumes_and_finishes_each_task_once(tmp_path: Path, ray_address: str) -> None:
    demo = _demo(tmp_path)
    agent, _ = _slow_agent(demo)
    proc = _ray_eval_started(demo, agent, ray_address)
    _wait_for_results(demo, proc, at_least=3)
    proc.kill()  # SIGKILL: no handler runs, tasks are in flight on the cluster
    proc.communicate(timeout=60)
    results, before = _results(demo)
    assert 3 <= len(before) < 46
    run_id = results.parent.name

    done = km("eval", "--resume", run_id, "--backend", "ray", "--ray-address", ray_address, "--report-only", cwd=demo)
    assert done.returncode == 0, done.stderr
    assert f"resuming run {run_id}: {46 - len(before)} of 46 tasks left" in " ".join(done.stderr.split())
    _, after = _results(demo)
    ids = Counter(r["task_id"] for r in after)
    assert len(ids) == 46 and set(ids.values()) == {1}, "a task is missing or stored twice"
    assert after[: len(before)] == before
    listed = json.loads(km("runs", "--json", cwd=demo).stdout)[0]
    assert listed["status"] == "complete" and listed["tasks_done"] == 46


HANGING_AGENT = """\
import json, os, sys, time
json.load(sys.stdin)
with open({pids!r}, "a") as fh:
    fh.write(f"{{os.getpid()}}\\n")
time.sleep(120)
print(json.dumps({{"output": "too late"}}))
"""


def test_a_ray_task_over_its_timeout_is_recorded_as_timed_out_and_its_agent_stopped(
    tmp_path: Path, ray_address: str
) -> None:
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "a.md").write_text("Skill A.\n")
    (tmp_path / "skills" / "b.md").write_text("Skill B.\n")
    (tmp_path / "s.jsonl").write_text(
        json.dumps({"sample_id": "s1", "prompt": "q", "assertions": [{"type": "contains", "value": "ok"}]}) + "\n"
    )
    pids = tmp_path / "pids"
    (tmp_path / "agent.py").write_text(HANGING_AGENT.format(pids=str(pids)))
    done = km(
        "eval",
        "--samples",
        "s.jsonl",
        "--control",
        "a",
        "--treatment",
        "b",
        "--executor",
        f"{sys.executable} {tmp_path / 'agent.py'}",
        "--timeout",
        "20",
        "--no-cache",
        "--report-only",
        "--backend",
        "ray",
        "--ray-address",
        ray_address,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (path,) = (tmp_path / ".knowmeter" / "runs").glob("*/results.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["exec"]["timed_out"], r["exec"]["error"]) for r in records] == [(True, "timed out after 20s")] * 2
    started = [int(p) for p in pids.read_text().split()] if pids.exists() else []
    assert started, "no agent started within the timeout (a worker starts slowly on a loaded machine)"
    deadline = time.monotonic() + 60
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in started):
        assert time.monotonic() < deadline, "a timed-out agent is still running on the worker"
        time.sleep(0.2)


PRICED_AGENT = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"output": "Refunds are possible within 30 days of purchase.", "costUSD": 0.01}))
"""


def test_the_driver_keeps_the_budget_on_ray(tmp_path: Path, ray_address: str) -> None:
    demo = _demo(tmp_path)
    (demo / "agent.py").write_text(PRICED_AGENT)
    done = km(
        "eval",
        "--executor",
        f"{sys.executable} {demo / 'agent.py'}",
        "--no-cache",
        "--budget-usd",
        "0.1",
        "--concurrency",
        "4",
        "--json",
        "--report-only",
        "--backend",
        "ray",
        "--ray-address",
        ray_address,
        cwd=demo,
    )
    assert done.returncode == 0, done.stderr
    budget = json.loads(done.stdout)["run"]["budget"]
    assert 0 < budget["spent_known_usd"] <= 0.1 and budget["overshoot_usd"] is None, budget
    assert budget["tasks_not_started_for_budget"] > 0
    assert budget["tasks_with_known_cost"] + budget["tasks_not_started_for_budget"] == 46, budget
