"""Child processes from the event loop: ``run_command`` (bytes in on stdin, bytes out from
stdout) and, for the executors that use asyncio's subprocess API, ``use_pidfd_child_watcher``.

``run_command`` is the hot path of a run with a ``script`` agent, where thousands of commands may each
live a few milliseconds, so it does the least the kernel needs (``bench/bench_runner.py`` compares
it with asyncio's subprocess transports; the figures are in design/decisions.md):

- stdin is a pipe filled *before* the child starts; only a payload larger than the pipe's
  buffer is written on from the loop as the child reads it;
- stdout is a pipe read from the loop until end of file, or until ``EXIT_GRACE_S`` after the
  command exited when something it left running in the background still holds the pipe;
- the command is started (fork, exec) in a starter thread of this module's own (``_Starter``: a
  queue per thread, far lighter than ``anyio.to_thread``), so a start that waits for the CPU on a
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
import collections
import contextlib
import functools
import os
import queue
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
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


#: A started command: its pid and how to reap it (blocking; returns the exit code).
_Started = tuple[int, Callable[[], int]]
_Job = Callable[[], _Started]
_Handed = tuple[asyncio.AbstractEventLoop, asyncio.Future[_Started], _Job]


class _Starter:
    """Threads that start commands, so that a start (fork, exec) waiting for the CPU on a loaded
    machine holds up no other task. A start is handed to the thread that went idle last (its
    cache is warm) on a queue of its own, and its outcome comes back through
    ``call_soon_threadsafe``: far less of the parent's CPU than ``anyio.to_thread`` (a capacity
    limiter, a cancel scope and a worker-thread check per call). A thread is made when a start
    finds none idle, up to ``MAX_THREADS`` (then starts wait in a backlog); threads live as long
    as the process."""

    MAX_THREADS = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[_Handed]] = []
        self._backlog: collections.deque[_Handed] = collections.deque()
        self._threads = 0

    def start(self, job: _Job) -> asyncio.Future[_Started]:
        """Run ``job`` in a starter thread; its result (or exception) completes the future."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_Started] = loop.create_future()
        handed = (loop, future, job)
        with self._lock:
            if self._idle:
                self._idle.pop().put(handed)
            elif self._threads < self.MAX_THREADS:
                self._threads += 1
                jobs: queue.SimpleQueue[_Handed] = queue.SimpleQueue()
                jobs.put(handed)
                threading.Thread(target=self._work, args=(jobs,), name="knowmeter-start", daemon=True).start()
            else:
                self._backlog.append(handed)
        return future

    def _work(self, jobs: queue.SimpleQueue[_Handed]) -> None:
        while True:
            loop, future, job = jobs.get()
            try:
                started: _Started | BaseException = job()
            except BaseException as exc:  # handed to the awaiting task
                started = exc
            try:
                loop.call_soon_threadsafe(_deliver, future, started)
            except RuntimeError:  # the loop is closed: nothing awaits the command any more
                if not isinstance(started, BaseException):
                    _kill_group(started[0])
                    started[1]()
            with self._lock:
                if self._backlog:
                    jobs.put(self._backlog.popleft())
                else:
                    self._idle.append(jobs)


def _deliver(future: asyncio.Future[_Started], started: _Started | BaseException) -> None:
    if isinstance(started, BaseException):
        future.set_exception(started)
    else:
        future.set_result(started)


_STARTER = _Starter()


def _forget_starter_threads() -> None:
    """In a forked child the parent's threads are not there."""
    global _STARTER
    _STARTER = _Starter()


os.register_at_fork(after_in_child=_forget_starter_threads)


class _Child:
    """The loop-side state of one running command: its pipes, its pidfd, and what it wrote.
    ``done`` completes once the command exited and its stdout reached end of file, or
    ``EXIT_GRACE_S`` after the exit when something it left running still holds stdout (its
    group is then killed)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        started: _Started,
        stdin_fd: int | None,
        pending: memoryview,
        stdout_fd: int,
    ) -> None:
        self.loop, (self.pid, self.wait) = loop, started
        self.stdin_fd, self.pending, self.stdout_fd = stdin_fd, pending, stdout_fd
        self.chunks: list[bytes] = []
        self.code: int | None = None
        self.done: asyncio.Future[int] = loop.create_future()
        self.exited: asyncio.Future[int] | None = None  # awaited only after a cancellation
        self.grace: asyncio.TimerHandle | None = None
        self.pidfd = os.pidfd_open(self.pid)
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
        while True:  # on to end of file when it is already there: one loop turn fewer
            try:
                chunk = os.read(self.stdout_fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                break
            self.chunks.append(chunk)
        self.loop.remove_reader(self.stdout_fd)
        self.reading = False
        self._finish()

    def _reap(self) -> None:
        self.loop.remove_reader(self.pidfd)
        self.waiting = False
        self.code = self.wait()  # it exited: no wait
        if self.exited is not None and not self.exited.done():
            self.exited.set_result(self.code)
        if self.reading and self.grace is None:  # what it left running may hold stdout
            self.grace = self.loop.call_later(EXIT_GRACE_S, self._give_up_reading)
        self._finish()

    def _give_up_reading(self) -> None:
        """The command exited ``EXIT_GRACE_S`` ago and its stdout is still open: the reply is
        complete; kill what it left running."""
        _kill_group(self.pid)
        if self.code is not None and not self.done.done():
            self.done.set_result(self.code)

    def _finish(self) -> None:
        if self.code is not None and not self.reading and not self.done.done():
            self.done.set_result(self.code)

    def reaped(self) -> asyncio.Future[int]:
        """A future for the exit (after a cancellation cancelled ``done``)."""
        self.exited = self.loop.create_future()
        if self.code is not None:
            self.exited.set_result(self.code)
        return self.exited

    def close(self) -> None:
        """Unregister what is still registered and close everything."""
        self._close_stdin()
        if self.grace is not None:
            self.grace.cancel()
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
) -> _Started:
    """Start the command (in a starter thread: ``Popen`` returns only once the child has exec'd,
    and on a loaded machine that wait held up every other task's I/O and start on the loop)."""
    proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env=env, start_new_session=True)
    return proc.pid, proc.wait


async def _run_pidfd(
    argv: Sequence[str], stdin: bytes, cwd: str | None, env: Mapping[str, str] | None, stderr: IO[bytes]
) -> tuple[int, bytes]:
    loop = asyncio.get_running_loop()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        pending = _prefill(in_w, stdin)
        started = await _started(_STARTER.start(functools.partial(_start, argv, in_r, out_w, stderr, cwd, env)))
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
    child = _Child(loop, started, in_w if pending else None, pending, out_r)
    try:
        return await child.done, b"".join(child.chunks)
    except BaseException:
        _kill_group(child.pid)
        if child.code is None:
            with anyio.CancelScope(shield=True):
                await child.reaped()
        raise
    finally:
        child.close()


async def _started(start: asyncio.Future[_Started]) -> _Started:
    """The started command. Not cancellable: a cancellation waits for the start to finish, then
    kills the command's group and reaps it before it propagates."""
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        with anyio.CancelScope(shield=True):
            try:
                pid, wait = await start
            except Exception:  # it did not start: nothing to kill
                raise asyncio.CancelledError from None
            _kill_group(pid)
            await anyio.to_thread.run_sync(wait)
        raise
