"""Child processes from the event loop: ``run_command`` (bytes in on stdin, bytes out from
stdout) and, for the executors that use asyncio's subprocess API, ``use_pidfd_child_watcher``.

``run_command`` is the hot path of a run with a ``script`` agent, where thousands of commands may each
live a few milliseconds, so it does the least the kernel needs (``bench/bench_runner.py`` compares
it with asyncio's subprocess transports; the figures are in design/decisions.md):

- stdin is a pipe filled *before* the child starts; only a payload larger than the pipe's
  buffer is written on from the loop as the child reads it;
- stdout is a pipe read from the loop until end of file, or until ``EXIT_GRACE_S`` after the
  command exited when something it left running in the background still holds the pipe;
- the command is started (fork, exec) in a worker thread, so a start that waits for the CPU on a
  loaded machine holds up no other task; its pipes and pidfd are the loop's as before;
- the exit is seen through a pidfd registered with the loop, so no watcher thread and no
  SIGCHLD handler is involved;
- the command runs in a new session, so cancelling (a timeout) kills its whole process group.

Where pidfds are unavailable (not Linux, or a kernel older than 5.3) it falls back to
asyncio's subprocess API with the same behaviour, except that it reads stdout to its end of file
whatever holds it (asyncio sees the exit only once the pipes are closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import IO

import anyio


def _pidfds_work() -> bool:
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


#: Whether exits are awaited through pidfds (else asyncio's subprocess API is used).
USE_PIDFD = _pidfds_work()


def use_pidfd_child_watcher() -> bool:
    """For the other executors, which use asyncio's (or anyio's) subprocess API: on Python 3.11
    asyncio waits for each child in a thread of its own, and the loop blocks until that thread
    runs — a large share of a run of many short commands. Install asyncio's pidfd watcher instead
    (what Python >= 3.12 does by default). Returns True when it was installed."""
    if sys.version_info >= (3, 12) or not USE_PIDFD:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        asyncio.set_child_watcher(asyncio.PidfdChildWatcher())
    return True


async def run_command(
    argv: Sequence[str], stdin: bytes, *, cwd: str | None, env: Mapping[str, str] | None, stderr: IO[bytes]
) -> tuple[int, bytes]:
    """Run ``argv`` with ``stdin`` on its standard input; return (exit code, stdout).

    stderr goes to ``stderr`` (an open file). Raises ``FileNotFoundError`` / ``PermissionError``
    when the command cannot be started. Cancellation kills the command's process group and
    reaps it before the cancellation propagates.
    """
    if USE_PIDFD:
        return await _run_pidfd(argv, stdin, cwd, env, stderr)
    return await _run_asyncio(argv, stdin, cwd, env, stderr)


#: How long stdout may stay open once the command exited (seconds). A process it started in the
#: background and left running holds the pipe, and reading on to its end of file would wait for it
#: (to the timeout, or forever): after this the command's reply is taken as it is, and its
#: process group (what it left running) is killed.
EXIT_GRACE_S = 1.0


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _run_asyncio(
    argv: Sequence[str], stdin: bytes, cwd: str | None, env: Mapping[str, str] | None, stderr: IO[bytes]
) -> tuple[int, bytes]:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
    )
    try:
        stdout, _ = await proc.communicate(stdin)
    except BaseException:
        _kill_group(proc.pid)
        with anyio.CancelScope(shield=True):
            await proc.wait()
        raise
    return proc.returncode or 0, stdout


class _Child:
    """The loop-side state of one running command: its pipes, its pidfd, and what it wrote."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        proc: subprocess.Popen[bytes],
        stdin_fd: int | None,
        pending: memoryview,
        stdout_fd: int,
    ) -> None:
        self.loop, self.proc = loop, proc
        self.stdin_fd, self.pending, self.stdout_fd = stdin_fd, pending, stdout_fd
        self.chunks: list[bytes] = []
        self.eof: asyncio.Future[None] = loop.create_future()
        self.exited: asyncio.Future[int] = loop.create_future()
        self.pidfd = os.pidfd_open(proc.pid)
        loop.add_reader(stdout_fd, self._read)
        loop.add_reader(self.pidfd, self._reap)
        self.reading = self.waiting = True  # registered with the loop
        if stdin_fd is not None:
            loop.add_writer(stdin_fd, self._write)

    def _write(self) -> None:
        assert self.stdin_fd is not None
        try:
            self.pending = self.pending[os.write(self.stdin_fd, self.pending) :]
        except BlockingIOError:
            return
        except OSError:  # the command closed its stdin (or exited) without reading it all
            self.pending = self.pending[:0]
        if not self.pending:
            self._close_stdin()

    def _close_stdin(self) -> None:
        if self.stdin_fd is not None:
            self.loop.remove_writer(self.stdin_fd)
            os.close(self.stdin_fd)
            self.stdin_fd = None

    def _read(self) -> None:
        try:
            chunk = os.read(self.stdout_fd, 65536)
        except BlockingIOError:
            return
        if chunk:
            self.chunks.append(chunk)
        else:
            self.loop.remove_reader(self.stdout_fd)
            self.reading = False
            if not self.eof.done():  # (cancelled when the awaiting task was)
                self.eof.set_result(None)

    def _reap(self) -> None:
        self.loop.remove_reader(self.pidfd)
        self.waiting = False
        code = self.proc.wait()
        if not self.exited.done():
            self.exited.set_result(code)

    def reaped(self) -> asyncio.Future[int]:
        """A future for the exit, usable again after a cancellation cancelled the first one."""
        if self.exited.cancelled():
            self.exited = self.loop.create_future()
        return self.exited

    def close(self) -> None:
        """Unregister what is still registered and close everything."""
        self._close_stdin()
        if self.reading:
            self.loop.remove_reader(self.stdout_fd)
        if self.waiting:
            self.loop.remove_reader(self.pidfd)
        os.close(self.stdout_fd)
        os.close(self.pidfd)


def _prefill(fd: int, data: bytes) -> memoryview:
    """Write what fits into the (non-blocking) pipe now; return the rest."""
    view = memoryview(data)
    if not view:
        return view
    os.set_blocking(fd, False)
    try:
        return view[os.write(fd, view) :]
    except BlockingIOError:
        return view


def _start(
    argv: Sequence[str], stdin: int, stdout: int, stderr: IO[bytes], cwd: str | None, env: Mapping[str, str] | None
) -> subprocess.Popen[bytes]:
    """Start the command, in a worker thread: ``Popen`` returns only once the child has exec'd, and
    on a loaded machine that wait held up every other task's I/O (and every other start) on the loop."""
    return subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env=env, start_new_session=True)


async def _run_pidfd(
    argv: Sequence[str], stdin: bytes, cwd: str | None, env: Mapping[str, str] | None, stderr: IO[bytes]
) -> tuple[int, bytes]:
    loop = asyncio.get_running_loop()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        pending = _prefill(in_w, stdin)
        # not cancellable (anyio's default): a cancellation waits for the start, then kills the group below
        proc = await anyio.to_thread.run_sync(_start, argv, in_r, out_w, stderr, cwd, env)
    except BaseException:
        for fd in (in_w, out_r):
            os.close(fd)
        raise
    finally:
        os.close(in_r)
        os.close(out_w)
    if not pending:
        os.close(in_w)
    os.set_blocking(out_r, False)
    child = _Child(loop, proc, in_w if pending else None, pending, out_r)
    try:
        code = await child.exited
        if not child.eof.done():
            try:
                await asyncio.wait_for(asyncio.shield(child.eof), EXIT_GRACE_S)
            except TimeoutError:  # what the command left running holds its stdout; the reply is complete
                _kill_group(proc.pid)
    except BaseException:
        _kill_group(proc.pid)
        if child.waiting:
            with anyio.CancelScope(shield=True):
                await child.reaped()
        raise
    finally:
        child.close()
    return code, b"".join(child.chunks)
