"""``run_command``: the script executor's way of running a command, with real child processes,
on both paths (pidfd where the kernel has it, asyncio's subprocess API otherwise)."""

from __future__ import annotations

import gc
import os
import tempfile
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
