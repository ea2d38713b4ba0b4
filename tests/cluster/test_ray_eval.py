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

from .conftest import RAY_ENV, km

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


def _measured(report: dict[str, Any]) -> dict[str, Any]:
    """What a run measured: the statistics, comparisons, verdict, gaps, coverage, decision and the
    per-variant figures (run metadata — ids, times, wall clock — and the latency and cache hits
    that differ between any two runs left out)."""
    keys = ("statistics", "comparisons", "verdict", "gaps", "coverage", "decision")
    variants = [{k: v for k, v in variant.items() if k not in ("latency_ms", "cached")}
                for variant in report["variants"]]
    return {"variants": variants, **{k: report[k] for k in keys}}


def test_demo_on_ray_gives_the_same_verdict_and_statistics_and_the_cache_serves_it(
        tmp_path: Path, ray_address: str) -> None:
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
    proc = subprocess.Popen([sys.executable, "-m", "knowmeter", "eval", "--executor", agent, "--no-cache",
                             "--backend", "ray", "--ray-address", ray_address, "--retry", "0", "--report-only"],
                            cwd=demo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=RAY_ENV)
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
    assert len(rerun) >= 2 and any(s["worker"] != victim["worker"] for s in rerun), \
        "the killed worker's task was not run again by another worker"


def test_a_killed_ray_driver_resumes_and_finishes_each_task_once(tmp_path: Path, ray_address: str) -> None:
    demo = _demo(tmp_path)
    agent, _ = _slow_agent(demo)
    proc = subprocess.Popen([sys.executable, "-m", "knowmeter", "eval", "--executor", agent, "--no-cache",
                             "--backend", "ray", "--ray-address", ray_address],
                            cwd=demo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=RAY_ENV)
    _wait_for_results(demo, proc, at_least=3)
    proc.kill()  # SIGKILL: no handler runs, tasks are in flight on the cluster
    proc.communicate(timeout=60)
    results, before = _results(demo)
    assert 3 <= len(before) < 46
    run_id = results.parent.name

    done = km("eval", "--resume", run_id, "--backend", "ray", "--ray-address", ray_address, "--report-only",
              cwd=demo)
    assert done.returncode == 0, done.stderr
    assert f"resuming run {run_id}: {46 - len(before)} of 46 tasks left" in " ".join(done.stderr.split())
    _, after = _results(demo)
    ids = Counter(r["task_id"] for r in after)
    assert len(ids) == 46 and set(ids.values()) == {1}, "a task is missing or stored twice"
    assert after[:len(before)] == before
    listed = json.loads(km("runs", "--json", cwd=demo).stdout)[0]
    assert listed["status"] == "complete" and listed["tasks_done"] == 46
