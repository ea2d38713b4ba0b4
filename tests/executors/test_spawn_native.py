"""The native spawner (``_native_spawn.c``): that it is built where it can be, and what only it
has — its pool of worker threads, its batches, the switch to turn it off."""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import anyio
import pytest

from knowmeter.executors import _spawn
from knowmeter.executors._spawn import run_command
from knowmeter.executors._spawn_native import executables
from tests.executors.test_spawn import open_fds, use_path, zombie_children


def test_native_spawn_is_built_where_a_c_compiler_and_glibc_2_34_are() -> None:
    """CI must not test the fallback alone without saying so: on Linux with a C compiler the
    install (``pip install -e .``) builds the extension, and with glibc >= 2.34 it loads."""
    if not sys.platform.startswith("linux") or shutil.which("cc") is None:
        pytest.skip("no C compiler here: the pure-Python path is the one in use")
    spec = importlib.util.find_spec("knowmeter.executors._native_spawn")
    assert spec is not None, "knowmeter.executors._native_spawn was not built: reinstall with pip install -e '.[dev]'"
    libc, version = platform.libc_ver()
    if libc == "glibc" and tuple(map(int, version.split(".")[:2])) >= (2, 34) and _spawn.USE_PIDFD:
        from knowmeter.executors import _native_spawn

        assert _spawn.NATIVE is _native_spawn.Batch


@pytest.fixture
def native(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    use_path(monkeypatch, "native")
    from knowmeter.executors import _native_spawn

    yield _native_spawn


def test_knowmeter_spawn_python_turns_the_native_path_off() -> None:
    if _spawn.NATIVE is None:
        pytest.skip("the native spawner is not in use here")
    probe = "from knowmeter.executors import _spawn; print(_spawn.NATIVE is None)"
    for value, off in (("python", "True"), ("", "False")):
        env = {**os.environ, "KNOWMETER_SPAWN": value}
        out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == off


def wait_for_no_thread(native: ModuleType) -> None:
    for _ in range(100):
        if native.pool_state()[0] == 0:
            return
        time.sleep(0.05)


def test_idle_threads_exit_and_the_cap_queues_the_rest(native: ModuleType) -> None:
    previous = native.configure(max_threads=2, idle_s=0.2)
    try:
        wait_for_no_thread(native)  # (those an earlier test left idle go too)
        replies: dict[int, tuple[int, bytes]] = {}
        most = 0

        async def main() -> None:
            async def one(i: int) -> None:
                nonlocal most
                with tempfile.TemporaryFile() as err:
                    replies[i] = await run_command(
                        ["sh", "-c", "cat; exit 3"], b"%d" % i, cwd=None, env=None, stderr=err
                    )
                most = max(most, native.pool_state()[0])

            async with anyio.create_task_group() as tg:
                for i in range(12):
                    tg.start_soon(one, i)

        anyio.run(main)
        assert replies == {i: (3, b"%d" % i) for i in range(12)} and most <= 2
        wait_for_no_thread(native)  # no thread outlives its work for good
        assert native.pool_state() == (0, 0, 0)
    finally:
        native.configure(max_threads=previous[0], idle_s=previous[1])


@pytest.mark.slow
def test_a_cancelled_command_still_queued_is_dropped_at_once(native: ModuleType, tmp_path: Path) -> None:
    previous = native.configure(max_threads=1, idle_s=0.2)
    marker = tmp_path / "ran"
    try:
        wait_for_no_thread(native)

        async def main() -> float:
            waited = float("nan")
            with tempfile.TemporaryFile() as err:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(lambda: run_command(["sleep", "1"], b"", cwd=None, env=None, stderr=err))
                    await anyio.sleep(0.05)  # the sleep has the one thread
                    started = time.monotonic()
                    with anyio.move_on_after(0.1):  # queued behind the sleep the whole time
                        await run_command(["touch", str(marker)], b"", cwd=None, env=None, stderr=err)
                    waited = time.monotonic() - started
            return waited

        assert anyio.run(main) < 0.6  # not the second the sleep holds the thread
        assert not marker.exists()
    finally:
        native.configure(max_threads=previous[0], idle_s=previous[1])


def test_a_batch_whose_loop_is_gone_kills_and_reaps_what_it_ran(native: ModuleType, tmp_path: Path) -> None:
    """A ``Batch`` closed (its loop gone) with a command still running: the command's group is
    killed and its worker reaps it; no descriptor stays open."""
    before = open_fds()
    pidfile = tmp_path / "pid"
    batch = native.Batch()
    with tempfile.TemporaryFile() as err:
        sh = executables("sh", None)
        command = ["sh", "-c", f"echo $$ > {pidfile}; exec sleep 30"]
        batch.submit(command, sh, None, None, b"", err.fileno(), 1.0, 1 << 20)
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.01)
    pid = int(pidfile.read_text())
    batch.close()
    for _ in range(200):
        if not Path(f"/proc/{pid}").exists():
            break
        time.sleep(0.01)
    else:
        raise AssertionError(f"the command {pid} of a closed batch is still there")
    del batch
    assert zombie_children() == [] and open_fds() == before


def test_each_event_loop_has_its_own_batch(native: ModuleType) -> None:
    async def twice() -> list[tuple[int, bytes]]:
        with tempfile.TemporaryFile() as err:
            return [await run_command(["echo", str(i)], b"", cwd=None, env=None, stderr=err) for i in range(2)]

    assert anyio.run(twice) == [(0, b"0\n"), (0, b"1\n")]
    assert anyio.run(twice) == [(0, b"0\n"), (0, b"1\n")]  # a second loop: a batch of its own


def test_the_worker_threads_block_every_signal_so_sigint_reaches_python(native: ModuleType) -> None:
    previous = native.configure(idle_s=30)
    try:
        with tempfile.TemporaryFile() as err:
            assert anyio.run(lambda: run_command(["true"], b"", cwd=None, env=None, stderr=err)) == (0, b"")
        workers = native.pool_state()[0]
        sigint = 1 << (signal.SIGINT - 1)
        blocking = 0
        for task in Path("/proc/self/task").iterdir():
            status = (task / "status").read_text().split()
            blocked = int(status[status.index("SigBlk:") + 1], 16)
            if int(task.name) == os.getpid():
                assert not blocked & sigint  # the main thread takes SIGINT (Ctrl-C stops a run)
            blocking += bool(blocked & sigint)
        assert workers >= 1 and blocking >= workers
    finally:
        native.configure(idle_s=previous[1])


POLICY_PROBE = ["sh", "-c", "sed -n 's/^policy *: *//p' /proc/self/sched"]


def workers_policies() -> set[int]:
    return {
        os.sched_getscheduler(int(task.name))
        for task in Path("/proc/self/task").iterdir()
        if (task / "comm").read_text().strip() == "knowmeter-spawn"
    }


def test_the_workers_yield_their_cpu_but_the_commands_run_with_the_normal_policy(native: ModuleType) -> None:
    """A woken worker does not preempt the loop or an agent (SCHED_BATCH); the agent it starts
    gets the process's normal policy back."""
    if os.sched_getscheduler(0) != os.SCHED_OTHER:
        pytest.skip("this process does not run with the normal policy")
    previous = native.configure(idle_s=30)
    try:
        with tempfile.TemporaryFile() as err:
            code, out = anyio.run(lambda: run_command(POLICY_PROBE, b"", cwd=None, env=None, stderr=err))
        assert (code, int(out)) == (0, os.SCHED_OTHER)
        assert workers_policies() == {os.SCHED_BATCH}
    finally:
        native.configure(idle_s=previous[1])


def test_under_another_policy_the_workers_and_the_commands_keep_it(native: ModuleType) -> None:
    """Run under SCHED_IDLE (``chrt -i``): nothing is switched, the commands inherit it as before."""
    probe = (
        "import anyio, os, tempfile\n"
        "from knowmeter.executors._spawn import run_command\n"
        "from tests.executors.test_spawn_native import POLICY_PROBE, workers_policies\n"
        "with tempfile.TemporaryFile() as err:\n"
        "    code, out = anyio.run(lambda: run_command(POLICY_PROBE, b'', cwd=None, env=None, stderr=err))\n"
        "print(int(out), *workers_policies())\n"
    )
    idle = os.sched_param(0)
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.sched_setscheduler(0, os.SCHED_IDLE, idle),
    )
    assert out.stdout.split() == [str(os.SCHED_IDLE)] * 2
