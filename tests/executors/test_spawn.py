"""``run_command``: the script executor's way of running a command, with real child processes,
on every path (native: the C worker threads when the extension is built; pidfd where the kernel
has it; asyncio's subprocess API otherwise)."""

from __future__ import annotations

import gc
import os
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from knowmeter.executors import _spawn
from knowmeter.executors._spawn import run_command

try:
    from knowmeter.executors import _native_spawn
except ImportError:  # not built: test_native_spawn_is_built says whether it should have been
    _native_spawn = None  # type: ignore[assignment]

PATHS = [pytest.param("native", id="native"), pytest.param("pidfd", id="pidfd"), pytest.param("asyncio", id="asyncio")]


def use_path(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make ``run_command`` take the path ``name`` (skipped where it cannot run)."""
    if name == "native" and (_native_spawn is None or not _spawn.USE_PIDFD):
        pytest.skip("the native spawner is not built here (or no pidfds)")
    if name == "pidfd" and not _spawn.USE_PIDFD:
        pytest.skip("no pidfd support on this system")
    monkeypatch.setattr(_spawn, "NATIVE", _native_spawn.Batch if name == "native" and _native_spawn else None)
    monkeypatch.setattr(_spawn, "USE_PIDFD", name != "asyncio")


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    use_path(monkeypatch, request.param)
    yield request.param


@pytest.fixture(params=PATHS[:2])
def exit_aware_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The paths that see the exit apart from stdout (asyncio reads stdout to its end of file)."""
    use_path(monkeypatch, request.param)
    yield request.param


@pytest.fixture
def pidfd_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure-Python pidfd path (its starter threads are what these tests look at)."""
    use_path(monkeypatch, "pidfd")


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


@pytest.mark.usefixtures("exit_aware_path")
def test_a_reply_is_taken_when_the_command_exits_leaving_a_child_on_stdout() -> None:
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


@pytest.mark.usefixtures("exit_aware_path")
def test_a_silent_command_that_exits_leaving_a_child_on_stdout_is_seen_to_exit() -> None:
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


@pytest.mark.usefixtures("pidfd_path")
def test_starting_a_command_does_not_hold_up_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
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


@pytest.mark.usefixtures("pidfd_path")
def test_a_cancel_while_the_command_starts_kills_and_reaps_it(monkeypatch: pytest.MonkeyPatch) -> None:
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


@pytest.mark.usefixtures("pidfd_path")
def test_one_start_after_another_reuses_the_idle_starter_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_spawn, "_STARTER", _spawn._Starter())
    before = starter_threads()

    async def main() -> None:
        with tempfile.TemporaryFile() as err:
            for i in range(20):
                assert await run_command(["cat"], b"%d" % i, cwd=None, env=None, stderr=err) == (0, b"%d" % i)

    anyio.run(main)
    assert starter_threads() - before == 1


@pytest.mark.usefixtures("pidfd_path")
def test_starts_past_the_thread_limit_wait_in_the_backlog(monkeypatch: pytest.MonkeyPatch) -> None:
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


@pytest.mark.usefixtures("pidfd_path")
def test_a_start_that_gets_no_thread_fails_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
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


@pytest.mark.usefixtures("exit_aware_path")
def test_a_forked_child_starts_commands_with_threads_of_its_own() -> None:
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


def run_env(argv: list[str], env: dict[str, str] | None, cwd: str | None = None) -> tuple[int, bytes]:
    with tempfile.TemporaryFile() as err:
        return anyio.run(lambda: run_command(argv, b"", cwd=cwd, env=env, stderr=err))


@pytest.mark.usefixtures("path")
def test_a_big_stdin_to_a_child_that_closes_it_early_and_a_big_stdout() -> None:
    big = b"y" * (1 << 20)  # far more than a pipe holds; the child reads 5 bytes and closes stdin
    code, out, _ = run(["sh", "-c", "head -c 5; exec <&-; sleep 0.1; echo .; head -c 3000000 /dev/zero"], big)
    assert code == 0 and out[:7] == b"yyyyy.\n" and len(out) == 7 + 3_000_000 and out[7:].count(0) == 3_000_000


@pytest.mark.usefixtures("path")
def test_stdout_past_the_limit_is_read_and_dropped() -> None:
    """A command that prints far more than the limit runs to its end (never blocked on a full pipe)
    and its reply is the first ``limit`` + 1 bytes: the caller sees it was cut, memory stays bounded."""
    with tempfile.TemporaryFile() as err:
        script = "head -c 5000000 /dev/zero | tr '\\0' x; echo done >&2"
        code, out = anyio.run(
            lambda: run_command(["sh", "-c", script], b"", cwd=None, env=None, stderr=err, limit=1000)
        )
        err.seek(0)
        assert (code, out, err.read()) == (0, b"x" * 1001, b"done\n")
    assert run(["printf", "12345"], b"")[1] == b"12345"  # (the default limit: a reply kept whole)


@pytest.mark.usefixtures("path")
def test_start_failures_raise_as_popen_does(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(PermissionError):  # there, but not executable
        run([str(script)], b"")
    with pytest.raises(FileNotFoundError):
        run(["knowmeter-no-such-command-anywhere"], b"")
    script.chmod(0o755)
    with pytest.raises(FileNotFoundError) as missing_cwd:
        run([str(script)], b"", cwd=str(tmp_path / "gone"))
    if missing_cwd.value.filename is not None:
        assert missing_cwd.value.filename == str(tmp_path / "gone")
    assert run([str(script)], b"", cwd=str(tmp_path)) == (0, b"hi\n", b"")


@pytest.mark.usefixtures("path")
def test_env_given_or_inherited_and_path_looked_up_in_the_given_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "bin" / "km-only-here"
    tool.parent.mkdir()
    tool.write_text('#!/bin/sh\necho "from $KM_GIVEN"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("KM_INHERITED", "inherited")
    assert run_env(["sh", "-c", "echo $KM_INHERITED"], None) == (0, b"inherited\n")
    given = {"PATH": f"{tool.parent}:{os.environ['PATH']}", "KM_GIVEN": "given"}
    assert run_env(["sh", "-c", 'echo "$KM_INHERITED|$KM_GIVEN"'], given) == (0, b"|given\n")
    assert run_env(["km-only-here"], given) == (0, b"from given\n")  # found on the given PATH
    with pytest.raises(FileNotFoundError):  # ... and not on the process's
        run_env(["km-only-here"], None)


@pytest.mark.usefixtures("path")
def test_exit_codes_and_a_command_killed_by_a_signal() -> None:
    assert run(["sh", "-c", "exit 0"], b"")[0] == 0
    assert run(["sh", "-c", "exit 255"], b"")[0] == 255
    assert run(["sh", "-c", "kill -TERM $$"], b"")[0] == -signal.SIGTERM


@pytest.mark.usefixtures("path")
def test_the_child_gets_default_signals_and_no_inherited_descriptor() -> None:
    """As ``subprocess`` starts it: no signal blocked, SIGPIPE not ignored (Python ignores it),
    nothing open past stderr even when the parent holds an inheritable descriptor."""
    keep_r, keep_w = os.pipe()
    os.set_inheritable(keep_w, True)
    try:
        code, out, _ = run(["sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status; ls /proc/self/fd"], b"")
    finally:
        os.close(keep_r)
        os.close(keep_w)
    lines = out.decode().split()
    blocked, ignored = int(lines[lines.index("SigBlk:") + 1], 16), int(lines[lines.index("SigIgn:") + 1], 16)
    assert code == 0 and blocked == 0
    assert not ignored & (1 << (signal.SIGPIPE - 1)) and not ignored & (1 << (signal.SIGXFSZ - 1))
    fds = sorted(int(x) for x in lines[lines.index("SigIgn:") + 2 :])
    assert fds == [0, 1, 2, 3]  # (3: the directory ls lists)


@pytest.mark.slow
@pytest.mark.usefixtures("path")
def test_500_concurrent_commands_leak_no_descriptor_and_no_zombie() -> None:
    before = open_fds()
    replies: dict[int, tuple[int, bytes]] = {}

    async def main() -> None:
        async def one(i: int, err: object) -> None:
            replies[i] = await run_command(["sh", "-c", "cat; exit 3"], b"%d" % i, cwd=None, env=None, stderr=err)  # type: ignore[arg-type]

        with tempfile.TemporaryFile() as err:
            async with anyio.create_task_group() as tg:
                for i in range(500):
                    tg.start_soon(one, i, err)

    anyio.run(main)
    assert replies == {i: (3, b"%d" % i) for i in range(500)}
    assert open_fds() == before and zombie_children() == []
