"""Ctrl-C or SIGTERM during a run: the run's own cancel scope stops its tasks, then
``RunStopped`` (a ``KeyboardInterrupt``) names the signal.

asyncio's default handling cancels the main task natively; inside a task group that
cancellation can be absorbed by the group's own cancel scope in a rare interleaving, and the
run then went on as if nothing had happened (seen once in CI: a SIGINT ignored, the run
finished). Here SIGINT and SIGTERM (a CI cancel, ``timeout``, ``docker stop``; its default
action killed the process with nothing reported) are received by the event loop and cancel a
scope this module owns, the path anyio is built for: every task unwinds (agents killed and
reaped, the cache flushed) and the interruption is raised after the run has stopped."""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from anyio.abc import TaskGroup

T = TypeVar("T")

#: The signals that stop a run the way Ctrl-C does (SIGHUP: the terminal or the SSH session closed,
#: whose default action killed the process with nothing reported and its agents left running).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class RunStopped(KeyboardInterrupt):
    """The run was stopped by ``signum`` (one of ``STOP_SIGNALS``) and has unwound."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


async def until_interrupted(run: Callable[[], Awaitable[T]]) -> T:
    """Await ``run()``; a SIGINT, SIGTERM or SIGHUP cancels it and raises ``RunStopped`` once it has
    unwound. Outside the main thread (where no signal handler can be installed) ``run()`` is
    awaited as is."""
    if threading.current_thread() is not threading.main_thread():
        return await run()
    received: int | None = None

    async def watch(group: TaskGroup) -> None:
        nonlocal received
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            async for signum in signals:
                received = signum
                group.cancel_scope.cancel()
                return

    async with anyio.create_task_group() as group:
        group.start_soon(watch, group)
        result = await run()
        group.cancel_scope.cancel()  # the run is over: stop watching
    if received is not None:
        raise RunStopped(received)
    return result
