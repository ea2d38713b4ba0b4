"""The runner: cache, budget, retries, timeouts, interleaving, exactly-once results."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import anyio
import pytest

from knowmeter.artifacts import BASELINE, Variant
from knowmeter.executors import ExecRequest, ExecResult, Executor, ExecutorError
from knowmeter.runner import Budget, ExecutionSettings, ExecutionStats, ResponseCache, execute_tasks, plan_tasks
from knowmeter.samples import Sample
from knowmeter.store import ResultsWriter, iter_results
from knowmeter.traces import Trace
from tests.support.records import task_record


class FakeAgent(Executor):
    """An in-process executor with scripted behaviour (a test double for the runner only)."""

    name = "fake"
    non_llm = True

    def __init__(self, cost: float | None = 0.01, fail_times: int = 0, sleep: float = 0.0) -> None:
        self.calls = 0
        self.cost = cost
        self.fail_times = fail_times
        self.sleep = sleep
        self.counter = itertools.count()

    def identity(self) -> str:
        return "fake/1"

    async def run(self, request: ExecRequest) -> ExecResult:
        self.calls += 1
        if self.sleep:
            await anyio.sleep(self.sleep)
        if self.calls <= self.fail_times:
            raise ExecutorError("flaky")
        return ExecResult(f"answer {next(self.counter)} to {request.sample_id}", Trace(), cost_usd=self.cost)


def setup(tmp_path: Path, n: int = 3, repeat: int = 1):
    samples = tuple(Sample(sample_id=f"s{i}", prompt=f"q{i}") for i in range(n))
    variants = [Variant("a", "control", BASELINE, "baseline"), Variant("b", "treatment", BASELINE, "baseline")]
    (tmp_path / "ws").mkdir(exist_ok=True)
    return plan_tasks(samples, variants, repeat, tmp_path / "ws")


def run(tmp_path: Path, tasks, agent, *, budget=None, cache=True, **settings):
    c = ResponseCache(tmp_path / "out") if cache else None
    with ResultsWriter(tmp_path / "results.jsonl") as w:
        stats = anyio.run(
            lambda: execute_tasks(
                tasks, agent, writer=w, settings=ExecutionSettings(**settings), budget=budget or Budget(), cache=c
            )
        )
    if c:
        c.close()
    return stats, list(iter_results(tmp_path / "results.jsonl"))


def test_plan_is_interleaved_with_stable_ids(tmp_path: Path) -> None:
    tasks = setup(tmp_path, n=2, repeat=2)
    assert [t.id for t in tasks] == [
        "s0::a::r0",
        "s0::b::r0",
        "s1::a::r0",
        "s1::b::r0",
        "s0::a::r1",
        "s0::b::r1",
        "s1::a::r1",
        "s1::b::r1",
    ]


def test_every_task_once_and_cache_hits_on_second_run(tmp_path: Path) -> None:
    tasks = setup(tmp_path, n=4, repeat=2)
    agent = FakeAgent()
    stats, records = run(tmp_path, tasks, agent, concurrency=3)
    assert stats.done == 16 and agent.calls == 16
    assert sorted(r["task_id"] for r in records) == sorted(t.id for t in tasks)
    (tmp_path / "results.jsonl").unlink()
    agent2 = FakeAgent()
    stats2, records2 = run(tmp_path, tasks, agent2)
    assert agent2.calls == 0 and stats2.cached == 16
    # repeats are real replicates: each repeat has its own cached answer
    outs = {r["task_id"]: r["exec"]["output"] for r in records2}
    assert outs["s0::a::r0"] != outs["s0::a::r1"]


def test_errors_are_never_cached_and_retries_back_off(tmp_path: Path) -> None:
    tasks = setup(tmp_path, n=1)[:1]
    agent = FakeAgent(fail_times=2)
    stats, records = run(tmp_path, tasks, agent, retry=2, backoff_s=0.001)
    assert records[0]["exec"]["error"] is None and records[0]["attempts"] == 3 and stats.retries == 2
    (tmp_path / "results.jsonl").unlink()
    failing = FakeAgent(fail_times=99)
    _, records = run(tmp_path, setup(tmp_path, n=2)[2:3], failing, retry=1, backoff_s=0.001)
    assert records[0]["exec"]["error"] == "flaky" and failing.calls == 2
    (tmp_path / "results.jsonl").unlink()
    again = FakeAgent()
    _, records = run(tmp_path, setup(tmp_path, n=2)[2:3], again)
    assert again.calls == 1 and not records[0]["cached"]


def test_timeout_is_an_error_result(tmp_path: Path) -> None:
    _, records = run(tmp_path, setup(tmp_path, n=1)[:1], FakeAgent(sleep=5), timeout_s=0.05, cache=False)
    assert records[0]["exec"]["error"] == "timed out after 0.05s"


class SlowOn(FakeAgent):
    """Sleeps ``sleep`` seconds on the samples in ``slow``; answers the others at once."""

    def __init__(self, slow: set[str], sleep: float) -> None:
        super().__init__()
        self.slow = slow
        self.slow_sleep = sleep

    async def run(self, request: ExecRequest) -> ExecResult:
        if request.sample_id in self.slow:
            await anyio.sleep(self.slow_sleep)
        return await super().run(request)


def test_only_the_calls_that_overran_time_out(tmp_path: Path) -> None:
    tasks = setup(tmp_path, n=6)
    stats, records = run(tmp_path, tasks, SlowOn({"s1", "s4"}, 5), timeout_s=0.2, concurrency=3, cache=False)
    errors = {r["task_id"]: r["exec"]["error"] for r in records}
    assert stats.done == 12
    assert {t for t, e in errors.items() if e is not None} == {f"s{i}::{v}::r0" for i in (1, 4) for v in "ab"}
    assert {e for e in errors.values() if e is not None} == {"timed out after 0.2s"}


def test_calls_schedule_no_timer_each(tmp_path: Path) -> None:
    """The runner's timeout is one watchdog for the run: its calls schedule no event-loop timer
    each (a timer per call cost ~6 µs a task of the echo executor's window)."""
    timers: list[float] = []

    async def counted() -> ExecutionStats:
        loop = asyncio.get_running_loop()
        call_at = loop.call_at

        def counting(when: float, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
            timers.append(when)
            return call_at(when, *args, **kwargs)

        loop.call_at = counting  # type: ignore[method-assign,assignment]
        with ResultsWriter(tmp_path / "results.jsonl") as w:
            return await execute_tasks(
                setup(tmp_path, n=20), FakeAgent(), writer=w, settings=ExecutionSettings(), budget=Budget(), cache=None
            )

    stats = anyio.run(counted)
    assert stats.done == 40 and stats.errors == 0
    assert len(timers) <= 2


def test_budget_total_is_never_exceeded(tmp_path: Path) -> None:
    tasks = setup(tmp_path, n=10)
    budget = Budget(total_usd=0.05, per_task_usd=0.01)
    stats, records = run(tmp_path, tasks, FakeAgent(cost=0.01), budget=budget, concurrency=4, cache=False)
    assert len(records) == 5 and budget.spent_usd <= 0.05 + 1e-9
    assert len(stats.not_started) == 15 and budget.refused == 15


def test_budget_without_cap_learns_cost_serially(tmp_path: Path) -> None:
    budget = Budget(total_usd=0.035)
    _, records = run(tmp_path, setup(tmp_path, n=5), FakeAgent(cost=0.01), budget=budget, concurrency=4, cache=False)
    assert budget.spent_usd <= 0.035 and len(records) == 3


def test_unknown_cost_is_counted_as_unknown(tmp_path: Path) -> None:
    budget = Budget(total_usd=1.0, per_task_usd=0.1)
    run(tmp_path, setup(tmp_path, n=2), FakeAgent(cost=None), budget=budget, cache=False)
    d = budget.to_dict()
    assert d["tasks_with_unknown_cost"] == 4 and d["spent_known_usd"] == 0
    assert "unknown" in str(d["note"])


@pytest.mark.parametrize("cut", [5, 37])
def test_results_writer_cuts_a_partial_last_line(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path) as w:
        w.append(task_record("a"))
        w.append(task_record("b", output="x" * 40))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - cut])  # a killed writer left half a line
    assert [r["task_id"] for r in iter_results(path)] == ["a::a::r0"]
    with ResultsWriter(path) as w:
        w.append(task_record("c"))
    assert [r["task_id"] for r in iter_results(path)] == ["a::a::r0", "c::a::r0"]
