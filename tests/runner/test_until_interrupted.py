"""``runner.until_interrupted``: a SIGINT or SIGTERM cancels the run through its own scope, lets
every task unwind, then raises ``RunStopped`` (a KeyboardInterrupt naming the signal); a run that
ends first returns its result."""

from __future__ import annotations

import os
import signal
import threading

import anyio
import pytest

from knowmeter.runner import RunStopped, until_interrupted


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_unwinds_the_run_then_raises_keyboard_interrupt(signum: signal.Signals) -> None:
    unwound: list[str] = []
    before = signal.getsignal(signum)

    async def run() -> str:
        try:
            async with anyio.create_task_group() as tg:

                async def agent() -> None:
                    try:
                        await anyio.sleep(30)
                    finally:
                        with anyio.CancelScope(shield=True):  # e.g. reaping the killed agent
                            await anyio.sleep(0.05)
                            unwound.append("agent")

                tg.start_soon(agent)
                tg.start_soon(agent)
                await anyio.sleep(0.1)
                os.kill(os.getpid(), signum)
                await anyio.sleep(30)
        finally:
            unwound.append("run")
        return "finished"

    with pytest.raises(RunStopped) as stopped:
        anyio.run(until_interrupted, run)
    assert isinstance(stopped.value, KeyboardInterrupt) and stopped.value.signum == signum
    assert unwound == ["agent", "agent", "run"]
    assert signal.getsignal(signum) is before  # nothing left installed


def test_a_run_that_ends_first_returns_its_result() -> None:
    async def run() -> int:
        await anyio.sleep(0)
        return 42

    assert anyio.run(until_interrupted, run) == 42


def test_outside_the_main_thread_the_run_is_awaited_as_is() -> None:
    out: list[int] = []

    async def run() -> int:
        return 7

    t = threading.Thread(target=lambda: out.append(anyio.run(until_interrupted, run)))
    t.start()
    t.join()
    assert out == [7]
