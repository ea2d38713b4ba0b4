"""``run_command``: the script executor's way of running a command, with real child processes,
on both paths (pidfd where the kernel has it, asyncio's subprocess API otherwise)."""

from __future__ import annotations

import gc
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from knowmeter.executors import _spawn
from knowmeter.executors._spawn import run_command

PATHS = [pytest.param(True, id="pidfd"), pytest.param(False, id="asyncio")]


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    if request.param and not _spawn.USE_PIDFD:
        pytest.skip("no pidfd support on this system")
    monkeypatch.setattr(_spawn, "USE_PIDFD", request.param)
    yield request.param


def run(argv: list[str], stdin: bytes, cwd: str | None = None) -> tuple[int, bytes, bytes]:
    with tempfile.TemporaryFile() as err:
        code, out = anyio.run(lambda: run_command(argv, stdin, cwd=cwd, env=None, stderr=err))
        err.seek(0)
        return code, out, err.read()


def open_fds() -> set[str]:
    """This process's open descriptors with what each points to, after a collection (an object of an
    earlier test that the collector closes meanwhile is not a leak of the code under test)."""
    gc.collect()
    fds = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            fds.add(f"{name} -> {os.readlink(f'/proc/self/fd/{name}')}")
        except OSError:  # the descriptor listdir itself used, closed by now
            continue
    return fds


def zombie_children() -> list[int]:
    """Children of this process that exited and were never reaped."""
    zombies = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z" and int(fields[1]) == os.getpid():
                zombies.append(int(entry.name))
    return zombies


@pytest.mark.usefixtures("path")
def test_small_and_large_payloads_round_trip() -> None:
    assert run(["cat"], b"hello") == (0, b"hello", b"")
    big = os.urandom(3 * 1024 * 1024)  # far more than a pipe holds: written on as the child reads
    code, out, _ = run(["cat"], big)
    assert code == 0 and out == big


@pytest.mark.usefixtures("path")
def test_exit_code_stderr_cwd_and_a_child_that_ignores_stdin(tmp_path: Path) -> None:
    code, out, err = run(["sh", "-c", "pwd; echo oops >&2; exit 7"], b"x" * (2 * 1024 * 1024), cwd=str(tmp_path))
    assert code == 7 and out.decode().strip() == str(tmp_path) and err == b"oops\n"


@pytest.mark.usefixtures("path")
def test_missing_command_raises_and_leaks_no_descriptor(tmp_path: Path) -> None:
    before = open_fds()
    with pytest.raises(FileNotFoundError):
        run([str(tmp_path / "nope")], b"")
    for _ in range(20):
        run(["true"], b"payload")
    assert open_fds() - before == set()


@pytest.mark.usefixtures("path")
@pytest.mark.parametrize(
    "script",
    [
        "(sleep 1.5; touch {marker}) & sleep 30",  # cancelled while reading
        "exec >&-; (sleep 1.5; touch {marker}) & sleep 30",
    ],
)  # ... while waiting
@pytest.mark.slow
def test_cancel_kills_the_group_and_reaps_it(tmp_path: Path, script: str) -> None:
    marker = tmp_path / "grandchild-alive"

    async def main() -> None:
        with tempfile.TemporaryFile() as err, anyio.move_on_after(0.5):
            await run_command(["sh", "-c", script.format(marker=marker)], b"", cwd=None, env=None, stderr=err)

    t0 = time.monotonic()
    anyio.run(main)
    assert time.monotonic() - t0 < 3
    assert zombie_children() == []
    time.sleep(2)
    assert not marker.exists()


def test_a_reply_is_taken_when_the_command_exits_leaving_a_child_on_stdout() -> None:
    if not _spawn.USE_PIDFD:
        pytest.skip("the asyncio path reads stdout to its end of file (asyncio sees the exit only then)")
    script = 'cat >/dev/null; sleep 60 & echo $! > leftover; echo \'{"output": "30 days"}\''
    with tempfile.TemporaryDirectory() as cwd:
        started = time.monotonic()
        assert run(["sh", "-c", script], b"{}", cwd=cwd) == (0, b'{"output": "30 days"}\n', b"")
        assert time.monotonic() - started < 30  # not the minute the background sleep holds stdout
        leftover = int((Path(cwd) / "leftover").read_text())
    for _ in range(100):  # the process group was killed: the background sleep is gone
        if not Path(f"/proc/{leftover}").exists() or "Z" in Path(f"/proc/{leftover}/stat").read_text().split()[2]:
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the background process {leftover} is still running")


def test_a_silent_command_that_exits_leaving_a_child_on_stdout_is_seen_to_exit() -> None:
    if not _spawn.USE_PIDFD:
        pytest.skip("the asyncio path reads stdout to its end of file (asyncio sees the exit only then)")
    with tempfile.TemporaryDirectory() as cwd:  # no reply at all: only the late exit watch sees the exit
        started = time.monotonic()
        assert run(["sh", "-c", "cat >/dev/null; sleep 60 & exit 4"], b"{}", cwd=cwd) == (4, b"", b"")
        assert time.monotonic() - started < 30


class _HeldStart:
    """``subprocess.Popen`` (the real one), held before it starts until ``release`` is set: a fork and
    exec that wait for the CPU, as on a loaded machine. Records whether the loop set ``release``
    while the start was held (it cannot when the start blocks the loop: the hold then times out)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import subprocess
        import threading

        self.started, self.release = threading.Event(), threading.Event()
        self.released_by_loop: bool | None = None
        self.pids: list[int] = []
        real = subprocess.Popen

        def held(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
            self.started.set()
            self.released_by_loop = self.release.wait(2)
            proc = real(*args, **kwargs)  # type: ignore[call-overload]
            self.pids.append(proc.pid)
            return proc  # type: ignore[no-any-return]

        monkeypatch.setattr(subprocess, "Popen", held)

    async def wait_started(self) -> None:
        while not self.started.is_set():
            await anyio.sleep(0.005)


def test_starting_a_command_does_not_hold_up_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    if not _spawn.USE_PIDFD:
        pytest.skip("the asyncio path starts commands as asyncio does")
    hold = _HeldStart(monkeypatch)
    replies: list[tuple[int, bytes]] = []

    async def main() -> None:
        async def one() -> None:
            with tempfile.TemporaryFile() as err:
                replies.append(await run_command(["cat"], b"hi", cwd=None, env=None, stderr=err))

        async with anyio.create_task_group() as tg:
            tg.start_soon(one)
            await hold.wait_started()
            hold.release.set()  # only possible while the start is held: the loop is free

    anyio.run(main)
    assert hold.released_by_loop is True
    assert replies == [(0, b"hi")]


def test_a_cancel_while_the_command_starts_kills_and_reaps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    if not _spawn.USE_PIDFD:
        pytest.skip("the asyncio path starts commands as asyncio does")
    hold = _HeldStart(monkeypatch)
    before = open_fds()

    async def main() -> None:
        with tempfile.TemporaryFile() as err, anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: run_command(["sleep", "30"], b"", cwd=None, env=None, stderr=err))
                await hold.wait_started()
                scope.cancel()  # the start is under way in its thread: it finishes, then the command is killed
                hold.release.set()

    t0 = time.monotonic()
    anyio.run(main)
    assert time.monotonic() - t0 < 10
    (pid,) = hold.pids
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped
    assert zombie_children() == [] and open_fds() == before


def starter_threads() -> int:
    return sum(t.name == "knowmeter-start" for t in threading.enumerate())


def test_one_start_after_another_reuses_the_idle_starter_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    if not _spawn.USE_PIDFD:
        pytest.skip("the asyncio path starts commands as asyncio does")
    monkeypatch.setattr(_spawn, "_STARTER", _spawn._Starter())
    before = starter_threads()

    async def main() -> None:
        with tempfile.TemporaryFile() as err:
            for i in range(20):
                assert await run_command(["cat"], b"%d" % i, cwd=None, env=None, stderr=err) == (0, b"%d" % i)

    anyio.run(main)
    assert starter_threads() - before == 1


def test_starts_past_the_thread_limit_wait_in_the_backlog(monkeypatch: pytest.MonkeyPatch) -> None:
    if not _spawn.USE_PIDFD:
        pytest.skip("the asyncio path starts commands as asyncio does")
    starter = _spawn._Starter()
    starter.MAX_THREADS = 2
    monkeypatch.setattr(_spawn, "_STARTER", starter)
    before = starter_threads()
    replies: dict[int, tuple[int, bytes]] = {}

    async def main() -> None:
        async def one(i: int) -> None:
            with tempfile.TemporaryFile() as err:
                replies[i] = await run_command(["sh", "-c", "cat; exit 3"], b"%d" % i, cwd=None, env=None, stderr=err)

        async with anyio.create_task_group() as tg:
            for i in range(12):
                tg.start_soon(one, i)

    anyio.run(main)
    assert replies == {i: (3, b"%d" % i) for i in range(12)}
    assert starter_threads() - before == 2


def test_a_start_that_gets_no_thread_fails_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    if not _spawn.USE_PIDFD:
        pytest.skip("the asyncio path starts commands as asyncio does")
    starter = _spawn._Starter()
    starter.MAX_THREADS = 1
    monkeypatch.setattr(_spawn, "_STARTER", starter)

    def refused(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    before = open_fds()
    with monkeypatch.context() as patched:
        patched.setattr(threading.Thread, "start", refused)
        with pytest.raises(RuntimeError, match="can't start new thread"):
            run(["cat"], b"x")
    assert open_fds() == before
    assert run(["cat"], b"x")[:2] == (0, b"x")  # no thread was counted for the failed start (the limit is 1)


def test_a_forked_child_starts_commands_with_threads_of_its_own() -> None:
    if not _spawn.USE_PIDFD:
        pytest.skip("the asyncio path starts commands as asyncio does")
    run(["true"], b"")  # the parent has a starter thread, idle; a forked child has none
    pid = os.fork()
    if pid == 0:  # the child: exits 0 only when its command ran
        try:
            os._exit(0 if run(["echo", "hi"], b"")[1] == b"hi\n" else 1)
        finally:
            os._exit(2)
    for _ in range(200):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child's command never started (it handed it to a thread it does not have)")
