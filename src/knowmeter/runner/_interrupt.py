"""Ctrl-C during a run: the run's own cancel scope stops its tasks, then ``KeyboardInterrupt``.

asyncio's default handling cancels the main task natively; inside a task group that
cancellation can be absorbed by the group's own cancel scope in a rare interleaving, and the
run then went on as if nothing had happened (seen once in CI: a SIGINT ignored, the run
finished). Here SIGINT is received by the event loop and cancels a scope this module owns, the
path anyio is built for: every task unwinds (agents killed and reaped, the cache flushed) and
the interruption is raised after the run has stopped."""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from anyio.abc import TaskGroup

T = TypeVar("T")


async def until_interrupted(run: Callable[[], Awaitable[T]]) -> T:
    """Await ``run()``; a SIGINT cancels it and raises ``KeyboardInterrupt`` once it has unwound.
    Outside the main thread (where no signal handler can be installed) ``run()`` is awaited as is."""
    if threading.current_thread() is not threading.main_thread():
        return await run()
    interrupted = False

    async def watch(group: TaskGroup) -> None:
        nonlocal interrupted
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                interrupted = True
                group.cancel_scope.cancel()
                return

    async with anyio.create_task_group() as group:
        group.start_soon(watch, group)
        result = await run()
        group.cancel_scope.cancel()  # the run is over: stop watching
    if interrupted:
        raise KeyboardInterrupt
    return result
