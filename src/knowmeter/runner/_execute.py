"""Executing planned tasks: concurrency, per-task timeout, retries with backoff, the response
cache, the budget, and one flushed results line per finished task."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio

from knowmeter import defaults
from knowmeter._faults import stops_every_task
from knowmeter.executors import ExecRequest, ExecResult, Executor, ExecutorError, SkillInstall
from knowmeter.runner._breaker import ErrorBreaker
from knowmeter.runner._budget import Budget, invalid_cost
from knowmeter.runner._cache import ResponseCache, task_cache_key
from knowmeter.runner._deadlines import Deadlines
from knowmeter.runner._open_files import make_room
from knowmeter.runner._plan import Task, directory_fingerprint
from knowmeter.store import ExecRecord, Processed, ResultsWriter, TaskRecord, TraceRecord, utc_timestamp
from knowmeter.traces import Trace

#: Extra seconds the runner waits for an executor that enforces the task's timeout itself (it
#: kills the agent's process group, with a grace of its own, and parses what was written so far).
TIMEOUT_GRACE_S = 30.0

PostProcess = Callable[[Task, ExecResult], Awaitable[Processed]]
OnRecord = Callable[[TaskRecord], None]


@dataclass
class ExecutionSettings:
    concurrency: int = defaults.CONCURRENCY
    timeout_s: float = defaults.TIMEOUT_S
    retry: int = defaults.RETRY
    backoff_s: float = 0.5
    model: str | None = None
    #: paths no agent may see (every variant's artifact, the sample files, the run store)
    protected: tuple[Path, ...] = ()
    #: stop starting tasks when the first this many finished tasks failed the same way (0: never)
    max_errors: int = defaults.MAX_ERRORS


@dataclass
class ExecutionStats:
    done: int = 0
    errors: int = 0
    cached: int = 0
    retries: int = 0
    not_started: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    #: why the run stopped starting tasks after its first ones failed the same way (None: it did not)
    halted: str | None = None
    #: the tasks not started because of it
    halted_tasks: list[str] = field(default_factory=list)


_NOTHING = Processed()


def exec_record(result: ExecResult) -> ExecRecord:
    """``result`` as stored: its fields by name (a rename on either side fails mypy here)."""
    trace = result.trace.to_dict()
    return ExecRecord(
        output=result.output,
        usage=dict(result.usage),
        cost_usd=result.cost_usd,
        latency_ms=result.latency_ms,
        duration_api_ms=result.duration_api_ms,
        num_turns=result.num_turns,
        error=result.error,
        timed_out=result.timed_out,
        trace=TraceRecord(source=trace["source"], meta=trace["meta"], events=trace["events"]),
    )


def build_request(task: Task, settings: ExecutionSettings, budget: Budget) -> ExecRequest:
    artifact = task.variant.artifact
    skill = None
    if not task.variant.is_baseline and artifact.text is not None:
        skill = SkillInstall(task.variant.name, artifact.root, artifact.text)
    return ExecRequest(
        task_id=task.id,
        sample_id=task.sample.sample_id,
        prompt=task.sample.full_prompt(),
        system=artifact.text if not task.variant.is_baseline else None,
        model=settings.model,
        workspace=task.workspace,
        skill=skill,
        timeout_s=settings.timeout_s,
        max_cost_usd=budget.per_task_usd,
        protected=settings.protected,
        extra_skills=task.skills,
    )


def call_limit(executor: Executor, settings: ExecutionSettings) -> float:
    """How long the runner lets one executor call run (seconds)."""
    return settings.timeout_s + (TIMEOUT_GRACE_S if executor.enforces_timeout else 0.0)


async def _run_with_retries(
    executor: Executor, request: ExecRequest, settings: ExecutionSettings, stats: ExecutionStats, deadlines: Deadlines
) -> tuple[ExecResult, int]:
    attempt = 0
    limit = deadlines.limit_s
    while True:
        attempt += 1
        started = time.perf_counter()
        try:
            with deadlines.call():
                result = await executor.run(request)
            if result.latency_ms is None:
                result.latency_ms = (time.perf_counter() - started) * 1000
            return result, attempt
        except TimeoutError:
            msg = f"timed out after {limit:g}s"
            return ExecResult(
                "",
                Trace(source=executor.name),
                error=msg,
                timed_out=True,
                latency_ms=(time.perf_counter() - started) * 1000,
            ), attempt
        except ExecutorError as exc:
            if attempt > settings.retry:
                return ExecResult(
                    "", Trace(source=executor.name), error=str(exc), latency_ms=(time.perf_counter() - started) * 1000
                ), attempt
            stats.retries += 1
            await anyio.sleep(min(settings.backoff_s * 2 ** (attempt - 1), 30.0))
        except Exception as exc:  # an executor bug (or an SDK's own exception) fails the task, with its attempts
            if stops_every_task(exc):  # a full disk, no descriptor left: not this task's failure
                raise
            return ExecResult(
                "",
                Trace(source=executor.name),
                error=f"{type(exc).__name__}: {exc}",
                latency_ms=(time.perf_counter() - started) * 1000,
            ), attempt


async def execute_tasks(
    tasks: list[Task],
    executor: Executor,
    *,
    writer: ResultsWriter,
    settings: ExecutionSettings,
    budget: Budget,
    cache: ResponseCache | None,
    post_process: PostProcess | None = None,
    on_record: OnRecord | None = None,
) -> ExecutionStats:
    """Run ``tasks`` and append one record per finished task to ``writer``."""
    make_room(settings.concurrency)
    stats = ExecutionStats()
    started = time.perf_counter()
    next_index = 0
    breaker = ErrorBreaker(settings.max_errors)
    workers = max(1, settings.concurrency)
    deadlines = Deadlines(call_limit(executor, settings))
    stopped = 0  # workers that ran out of tasks: the last one stops the deadlines' watchdog

    fingerprint = functools.cache(directory_fingerprint)  # each workspace hashed once a run

    async def handle(task: Task, reserved: float) -> None:
        request = build_request(task, settings, budget)
        key = None
        result: ExecResult | None = None
        attempts = 0
        cached = False
        t0 = utc_timestamp()
        if cache is not None:
            key = task_cache_key(task, executor.identity(), settings.model, fingerprint)
            result = cache.get(key)
            cached = result is not None
        try:
            if result is None:
                await budget.on_disk()  # its reservation: a kill -9 during the call leaves it charged
                result, attempts = await _run_with_retries(executor, request, settings, stats, deadlines)
                problem = invalid_cost(result.cost_usd)
                if problem is not None:  # rejected as an executor error; what it spent is unknown
                    result = replace(result, cost_usd=None, error=f"executor error: {problem}")
                if cache is not None and key is not None:
                    cache.put(key, result)
        except Exception as exc:  # an executor bug must not kill the run: record it on the task
            if stops_every_task(exc):  # the machine's fault: the run stops, what finished stays (resumable)
                raise
            result = ExecResult("", Trace(source=executor.name), error=f"{type(exc).__name__}: {exc}")
        finally:
            budget.settle(reserved, 0.0 if cached else None if result is None else result.cost_usd, key=task.id)
        finished = utc_timestamp()
        done = _NOTHING if post_process is None else await post_process(task, result)
        record = TaskRecord(
            task_id=task.id,
            sample_id=task.sample.sample_id,
            variant=task.variant.name,
            role=task.variant.role,
            repeat=task.repeat,
            attempts=attempts,
            cached=cached,
            started_at=t0,
            finished_at=finished,
            prompt=request.prompt,
            exec=exec_record(result),
            grade=done.grade,
            analysis=done.analysis,
            comprehension=done.comprehension,
            activation=done.activation,
        )
        writer.append(record)
        stats.done += 1
        stats.errors += result.error is not None
        stats.cached += cached
        sid, variant = task.sample.sample_id, task.variant.name
        if breaker.observe(result.error, sample_id=sid, variant=variant, timed_out=result.timed_out):
            stats.halted = breaker.reason()
        if on_record is not None:
            on_record(record)

    async def worker() -> None:
        nonlocal stopped
        try:
            await take_tasks()
        finally:
            stopped += 1
            if stopped == workers:
                deadlines.stop()

    async def take_tasks() -> None:
        nonlocal next_index
        while next_index < len(tasks):
            if breaker.tripped:
                stats.halted_tasks.extend(t.id for t in tasks[next_index:])
                next_index = len(tasks)
                return
            task = tasks[next_index]
            reserved = budget.try_reserve(key=task.id)
            if reserved is None:
                if budget.waiting_possible:
                    await budget.wait_for_room()
                    continue
                budget.refused += len(tasks) - next_index
                stats.not_started.extend(t.id for t in tasks[next_index:])
                next_index = len(tasks)
                return
            next_index += 1
            await handle(task, reserved)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(deadlines.watch)
            for _ in range(workers):
                tg.start_soon(worker)
    finally:
        if cache is not None:
            cache.flush()
    stats.wall_s = time.perf_counter() - started
    return stats
