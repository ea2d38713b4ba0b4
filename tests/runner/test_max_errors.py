"""Issue 34 point 6: a run whose first tasks all fail the same way stops (``--max-errors``),
keeps what finished and says how to resume; ``--limit`` / ``--sample`` run a subset that is never
taken for a run of the whole sample set. Real ``knowmeter`` processes with a script agent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from knowmeter import defaults
from knowmeter.runner._breaker import ErrorBreaker, error_class
from tests.support.cli import km, km_process

#: fails every task the same way, naming what varies per task (its prompt's length, a hex id)
BROKEN = """\
import json, sys, uuid
req = json.load(sys.stdin)
n = len(req["prompt"])
sys.stderr.write(f"Error: ANTHROPIC_API_KEY is not set (request {uuid.uuid4().hex}, prompt of {n} chars)\\n")
sys.exit(1)
"""
FIXED = 'import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"output": "Refunds within 30 days."}))\n'
SAMPLES = "".join(f"- {{sample_id: s{i}, prompt: 'question {'x' * i}?'}}\n" for i in range(8))


def project(tmp_path: Path, agent: str = BROKEN) -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "eval-samples.yaml").write_text(SAMPLES)
    (tmp_path / "agent.py").write_text(agent)
    return tmp_path


def eval_args(*more: str) -> list[str]:
    return ["eval", "--control", "baseline", "--executor", f"{sys.executable} agent.py", "--retry", "0", *more]


def run_files(root: Path) -> tuple[dict, dict, list[dict]]:  # type: ignore[type-arg]
    run = next((root / ".knowmeter" / "runs").iterdir())
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return json.loads((run / "run.json").read_text()), json.loads((run / "report.json").read_text()), results


def test_error_class_ignores_what_varies_per_task() -> None:
    a = error_class("claude exited with 1: model 'x-1' not found (req 3f2a9c81d0)\ntrace", sample_id="s1")
    b = error_class("claude exited with 1: model 'y-22' not found (req 0b7e55aa19)", sample_id="s2")
    assert a == b == "claude exited with <n>: model <str> not found (req <hex>)"
    assert error_class("/usr/bin/x: No such file or directory") == error_class("/opt/y/z: No such file or directory")
    assert error_class("anything", timed_out=True) == "timed out"
    assert error_class("failed on s7", sample_id="s7") == error_class("failed on q", sample_id="q")
    # a numeric sample id is not the exit code that happens to equal it
    assert error_class("agent exited with 1: no key", sample_id="1") == error_class("agent exited with 1: no key")
    assert error_class("variant v2 of v2-big failed", variant="v2") == "variant <id> of v<n>-big failed"


def test_breaker_trips_only_on_the_first_tasks_failing_alike() -> None:
    same = ErrorBreaker(3)
    assert [same.observe("key missing", sample_id=f"s{i}", variant="v") for i in range(3)] == [False, False, True]
    assert "first 3 finished tasks" in same.reason() and "key missing" in same.reason()
    mixed = ErrorBreaker(2)
    assert not mixed.observe("key missing", sample_id="a", variant="v")
    assert not mixed.observe("rate limited", sample_id="b", variant="v")  # two kinds: not one broken setting
    assert not mixed.observe("rate limited", sample_id="c", variant="v") and not mixed.tripped
    worked = ErrorBreaker(2)
    assert not worked.observe(None, sample_id="a", variant="v")  # one success: the setup works
    assert not any(worked.observe("key missing", sample_id=s, variant="v") for s in "bcd")
    off = ErrorBreaker(0)
    assert not any(off.observe("key missing", sample_id=s, variant="v") for s in "abcdef")


@pytest.mark.slow
def test_a_broken_agent_stops_the_run_which_resumes_once_fixed(tmp_path: Path) -> None:
    root = project(tmp_path)
    r = km_process(*eval_args("--max-errors", "3", "--concurrency", "1"), cwd=root)
    assert r.returncode == 1, r.stderr
    run, report, results = run_files(root)
    assert len(results) == 3 and all(x["exec"]["error"] for x in results)  # what finished is kept
    assert run["status"] == "halted" and run["halted"]["tasks_not_started"] == 5
    assert "first 3 finished tasks all failed the same way" in run["halted"]["reason"]
    resume = f"knowmeter eval --resume {run['run_id']}"
    stderr = " ".join(r.stderr.split())
    assert "stopped: the first 3 finished tasks all failed the same way" in stderr and resume in stderr
    assert resume in report["run"]["partial"]["reason"]
    assert report["decision"]["outcome"] == "NOT MEASURED"
    assert resume in " ".join(r.stdout.split()).split("\n\n")[-1]  # the recommendation says how to finish
    (root / "agent.py").write_text(FIXED)
    again = km_process("eval", "--resume", run["run_id"], cwd=root)
    run, report, results = run_files(root)
    assert run["status"] == "complete" and "halted" not in run, again.stderr
    assert len(results) == 8 and report["run"]["partial"] is None


@pytest.mark.slow
def test_the_default_stops_a_broken_run_and_zero_never_stops(tmp_path: Path) -> None:
    root = project(tmp_path / "default")
    km_process(*eval_args("--concurrency", "1"), cwd=root)
    run, _, results = run_files(root)
    assert run["status"] == "halted" and len(results) == defaults.MAX_ERRORS == 5
    root = project(tmp_path / "never")
    km_process(*eval_args("--concurrency", "1", "--max-errors", "0"), cwd=root)
    run, _, results = run_files(root)
    assert run["status"] == "complete" and len(results) == 8


@pytest.mark.slow
def test_a_subset_run_is_marked_everywhere_and_resumes_as_the_same_subset(tmp_path: Path) -> None:
    root = project(tmp_path)
    args = eval_args("--sample", "s5", "--sample", "s2", "--sample", "s7", "--limit", "2", "--max-errors", "1")
    r = km_process(*args, "--concurrency", "1", cwd=root)
    run, report, _ = run_files(root)
    assert run["tasks_total"] == 2 and run["subset"] == {
        "samples": 2,
        "of": 8,
        "sample_ids": ["s5", "s2", "s7"],
        "limit": 2,
    }
    wm = report["run"]["watermark"]
    assert wm["count"] == 2 and wm["paths"] == ["eval-samples.yaml [subset 2 of 8]"]
    assert "SUBSET: 2 of the 8 samples" in " ".join(r.stdout.split())
    (root / "agent.py").write_text(FIXED)
    km_process("eval", "--resume", run["run_id"], "--json", cwd=root)
    run, report, results = run_files(root)
    assert run["status"] == "complete" and sorted(x["sample_id"] for x in results) == ["s2", "s5"]
    assert report["run"]["subset"]["samples"] == 2 and report["run"]["watermark"]["sha256"] == wm["sha256"]
    full = km_process(*eval_args("--json"), cwd=root)
    assert json.loads(full.stdout)["run"]["watermark"]["sha256"] != wm["sha256"]  # never one sample set


def test_an_unknown_sample_id_is_one_line(tmp_path: Path) -> None:
    root = project(tmp_path, FIXED)
    r = km(*eval_args("--sample", "s7x"), cwd=root)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "knowmeter: error: --sample 's7x': no sample with this id in eval-samples.yaml (did you mean 's7'?)"
    ]
    assert not (root / ".knowmeter" / "runs").exists() or not any((root / ".knowmeter" / "runs").iterdir())
