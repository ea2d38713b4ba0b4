"""One task's executor call through the runner's retries and timeout, outside a run."""

from __future__ import annotations

import anyio

from knowmeter.executors import ExecRequest, ExecResult, Executor
from knowmeter.runner._deadlines import Deadlines
from knowmeter.runner._execute import ExecutionSettings, ExecutionStats, _run_with_retries, call_limit


def run_with_retries(executor: Executor, request: ExecRequest, settings: ExecutionSettings) -> tuple[ExecResult, int]:
    """The result and the attempts made, the deadlines' watchdog running as in a run."""

    async def call() -> tuple[ExecResult, int]:
        deadlines = Deadlines(call_limit(executor, settings))
        async with anyio.create_task_group() as tg:
            tg.start_soon(deadlines.watch)
            try:
                out = await _run_with_retries(executor, request, settings, ExecutionStats(), deadlines)
            finally:
                deadlines.stop()
        return out

    return anyio.run(call)
