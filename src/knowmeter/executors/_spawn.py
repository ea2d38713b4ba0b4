"""Child processes from the event loop: ``run_command`` (bytes in on stdin, bytes out from
stdout) and, for the executors that use asyncio's subprocess API, ``use_pidfd_child_watcher``.

``run_command`` is the hot path of a run with a ``script`` agent, where thousands of commands may each
live a few milliseconds, so it does the least the kernel needs (``bench/bench_runner.py`` compares
it with asyncio's subprocess transports; the figures are in design/decisions.md). It takes the
first of three paths that works here:

1. **native** (``_native_spawn.c``, built at install when there is a C compiler; Linux, glibc >=
   2.34, pidfds): C worker threads — a pool that grows on demand up to a cap, a queue past it,
   every signal blocked in them, idle ones exit after a while, running as ``SCHED_BATCH`` (a worker
   woken does not preempt the loop or an agent: that preemption cost the loop a context switch and
   a cold cache a task) when the process has the normal policy — each run one command from start to
   reap: pipes, stdin prefilled then written as the child reads (the rest dropped when it closes
   stdin), ``posix_spawn`` in a new session with SIGPIPE/SIGXFSZ back to default, an empty signal
   mask, the normal scheduling policy back, the working directory, stdin/stdout/stderr, every
   other descriptor closed (as ``subprocess`` with ``close_fds``; a bare ``argv[0]`` is looked up
   in the *given* environment's PATH, as ``subprocess`` does), then poll stdout, a pidfd and
   stdin, with the same ``EXIT_GRACE_S`` rule as below. A finished command goes on its batch's completion list (one
   batch per event loop) and the batch's eventfd is signalled; one loop callback drains them all
   (``_spawn_native``). The workers never hold the GIL: the interpreter's CPU a command is the
   submit and the future (issue 32: the parent's CPU a spawn is what an eval's wall time is made of
   on a 2-core machine whose agents keep it busy);
2. **pidfd** (pure Python, Linux >= 5.3), described below;
3. **asyncio**'s subprocess API, the last resort.

``KNOWMETER_SPAWN=python`` in the environment (read at import) skips the native path: for tests,
and for a user who meets a problem with it.

The pidfd path:

- stdin is a pipe filled *before* the child starts; only a payload larger than the pipe's
  buffer is written on from the loop as the child reads it;
- stdout is a pipe read from the loop until end of file, or until ``EXIT_GRACE_S`` after the
  command exited when something it left running in the background still holds the pipe;
- the command is started (fork, exec) in a starter thread of this module's own (``_Starter``: a
  queue per thread, far lighter than ``anyio.to_thread``), so a start that waits for the CPU on a
  loaded machine holds up no other task; the thread does not wake the loop when it is done: the
  loop learns of the start from the command's stdout (its pipes and pidfd are the loop's);
- the exit is seen through a pidfd registered with the loop (only when stdout ended first or the
  command runs on past ``WATCH_EXIT_AFTER_S``), so no watcher thread and no SIGCHLD handler is
  involved;
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

from knowmeter.executors._spawn_native import load as load_native
from knowmeter.executors._spawn_native import run_native


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


#: The native spawner's ``Batch`` (``_native_spawn``), or None: the Python paths are used.
NATIVE = load_native() if USE_PIDFD else None


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


#: How much of a command's stdout ``run_command`` keeps by default (bytes): an agent that prints
#: hundreds of megabytes must not hold that much memory per task.
MAX_STDOUT_BYTES = 16 << 20


async def run_command(
    argv: Sequence[str],
    stdin: bytes,
    *,
    cwd: str | None,
    env: Mapping[str, str] | None,
    stderr: IO[bytes],
    limit: int = MAX_STDOUT_BYTES,
) -> tuple[int, bytes]:
    """Run ``argv`` with ``stdin`` on its standard input; return (exit code, stdout).

    stderr goes to ``stderr`` (an open file). stdout past its first ``limit`` + 1 bytes is read
    and dropped (a reply longer than ``limit`` was cut). Raises ``FileNotFoundError`` /
    ``PermissionError`` when the command cannot be started. Cancellation kills the command's
    process group and reaps it before the cancellation propagates.
    """
    if NATIVE is not None:
        return await run_native(NATIVE, argv, stdin, cwd, env, stderr, EXIT_GRACE_S, limit)
    if USE_PIDFD:
        return await _run_pidfd(argv, stdin, cwd, env, stderr, limit)
    return await _run_asyncio(argv, stdin, cwd, env, stderr, limit)


#: How long stdout may stay open once the command exited (seconds). A process it started in the
#: background and left running holds the pipe, and reading on to its end of file would wait for it
#: (to the timeout, or forever): after this the command's reply is taken as it is, and its
#: process group (what it left running) is killed.
EXIT_GRACE_S = 1.0


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _run_asyncio(
    argv: Sequence[str], stdin: bytes, cwd: str | None, env: Mapping[str, str] | None, stderr: IO[bytes], limit: int
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
    feeding = asyncio.ensure_future(_feed(proc, stdin))
    try:
        kept = _Kept(limit)
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            kept.add(chunk)
        await feeding
        await proc.wait()
    except BaseException:
        feeding.cancel()
        _kill_group(proc.pid)
        with anyio.CancelScope(shield=True):
            await proc.wait()
        raise
    return proc.returncode or 0, kept.data()


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write ``data`` to the command's stdin and close it (a command that closed it early is fine)."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    proc.stdin.close()


class _Kept:
    """The first ``limit`` + 1 bytes of what a command printed (the rest is counted, not kept)."""

    def __init__(self, limit: int) -> None:
        self.room = limit + 1
        self.chunks: list[bytes] = []

    def add(self, chunk: bytes) -> None:
        if self.room > 0:
            self.chunks.append(chunk[: self.room])
            self.room -= len(self.chunks[-1])

    def data(self) -> bytes:
        return b"".join(self.chunks)


#: A start, run in a starter thread: it returns how it reports back (run once the thread is idle).
_Job = Callable[[], Callable[[], None]]


class _Starter:
    """Threads that start commands, so that a start (fork, exec) waiting for the CPU on a loaded
    machine holds up no other task. A start is handed to the thread that went idle last (its
    cache is warm) on a queue of its own — far less of the parent's CPU than ``anyio.to_thread``
    (a capacity limiter, a cancel scope and a worker-thread check per call). A thread is made when
    a start finds none idle, up to ``MAX_THREADS`` (then starts wait in a backlog); threads live as
    long as the process. A job reports back itself (see ``_Child.start``); what it returns runs
    once its thread is idle again, so that a start that follows the one it reports is handed to
    the same thread."""

    MAX_THREADS = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[_Job]] = []
        self._backlog: collections.deque[_Job] = collections.deque()
        self._threads = 0

    def start(self, job: _Job) -> None:
        """Run ``job`` (which must not raise) in a starter thread."""
        with self._lock:
            if self._idle:
                self._idle.pop().put(job)
            elif self._threads < self.MAX_THREADS:
                jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
                jobs.put(job)
                threading.Thread(target=self._work, args=(jobs,), name="knowmeter-start", daemon=True).start()
                self._threads += 1  # (when the thread could not be made, nothing changed)
            else:
                self._backlog.append(job)

    def _work(self, jobs: queue.SimpleQueue[_Job]) -> None:
        while True:
            report = jobs.get()()
            with self._lock:
                if self._backlog:
                    jobs.put(self._backlog.popleft())
                else:
                    self._idle.append(jobs)
            report()


_STARTER = _Starter()


def _forget_starter_threads() -> None:
    """In a forked child the parent's threads are not there."""
    global _STARTER
    _STARTER = _Starter()


os.register_at_fork(after_in_child=_forget_starter_threads)

#: How long after its hand-off a command's exit is watched for even when its stdout said nothing
#: (seconds): until then the loop learns of the start only from stdout (see ``_Child``).
WATCH_EXIT_AFTER_S = 0.05


class _Child:
    """The loop-side state of one command: its pipes, its pidfd, what it wrote; and, set by the
    starter thread, its ``Popen`` (or why it did not start).

    The loop is not woken when the start is done: the thread records it, then closes the
    parent's copies of the command's pipe ends, so stdout's end of file (the common end) always
    finds it recorded. The exit is watched (a pidfd) only when stdout ended before it, or when
    the command is still running ``WATCH_EXIT_AFTER_S`` after its hand-off — so that a command
    which exits leaving a process on its stdout is still seen to exit. ``done`` completes once the
    command exited and stdout reached end of file, or ``EXIT_GRACE_S`` after the exit was seen
    with stdout still open (the group is then killed)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, stdin_fd: int | None, pending: memoryview, stdout_fd: int, kept: _Kept
    ) -> None:
        self.loop = loop
        self.stdin_fd, self.pending, self.stdout_fd = stdin_fd, pending, stdout_fd
        self.kept = kept
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None  # set by the starter thread
        self.failed: BaseException | None = None  # ... or this
        self.on_start: asyncio.Future[None] | None = None  # a cancellation's wait for the start
        self.pidfd: int | None = None
        self.waiting = False  # the pidfd is registered with the loop
        self.code: int | None = None
        self.done: asyncio.Future[int] = loop.create_future()
        self.exited: asyncio.Future[int] | None = None  # awaited only after a cancellation
        self.grace: asyncio.TimerHandle | None = None
        loop.add_reader(stdout_fd, self._read)
        self.reading = True
        if stdin_fd is not None:
            loop.add_writer(stdin_fd, self._write)
        self.watch: asyncio.TimerHandle | None = loop.call_later(WATCH_EXIT_AFTER_S, self._watch_late)

    def start(
        self,
        argv: Sequence[str],
        in_r: int,
        out_w: int,
        stderr: IO[bytes],
        cwd: str | None,
        env: Mapping[str, str] | None,
    ) -> Callable[[], None]:
        """In the starter thread: start the command and record it; returns the report — closing
        the parent's copies of its pipe ends. ``Popen`` returns only once the child has exec'd: on
        the loop, that wait (for the CPU, on a loaded machine) held up every other task's I/O and
        start."""
        proc, failed = None, None
        try:
            proc = subprocess.Popen(
                argv, stdin=in_r, stdout=out_w, stderr=stderr, cwd=cwd, env=env, start_new_session=True
            )
        except BaseException as exc:  # handed to the awaiting task
            failed = exc
        with self.lock:
            self.proc, self.failed = proc, failed
        return functools.partial(self._report, in_r, out_w)

    def _report(self, in_r: int, out_w: int) -> None:
        """In the starter thread: the start is recorded; close the parent's copies of the command's
        pipe ends (stdout's end of file is then the command's), and wake a cancellation waiting."""
        os.close(in_r)
        os.close(out_w)
        with self.lock:
            waiting = self.on_start
        if waiting is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing awaits the command
                self.loop.call_soon_threadsafe(_set_if_pending, waiting)

    def _write(self) -> None:
        assert self.stdin_fd is not None
        try:
            self.pending = self.pending[os.write(self.stdin_fd, self.pending) :]
        except BlockingIOError:
            return
        except OSError:  # the command closed its stdin (or exited, or never started) without reading it all
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
            self.kept.add(chunk)
        self.loop.remove_reader(self.stdout_fd)
        self.reading = False
        if self.failed is not None:  # (recorded before the pipe ends were closed)
            if not self.done.done():
                self.done.set_exception(self.failed)
            return
        assert self.proc is not None
        if self.code is None and self.pidfd is None:
            code = self.proc.poll()
            if code is None:
                self._watch_exit()
            else:
                self.code = code
        self._finish()

    def _watch_late(self) -> None:
        self.watch = None
        if self.proc is None and self.failed is None:  # still starting
            self.watch = self.loop.call_later(WATCH_EXIT_AFTER_S, self._watch_late)
        elif self.proc is not None and self.code is None and self.pidfd is None:
            self._watch_exit()

    def _watch_exit(self) -> None:
        assert self.proc is not None
        self.pidfd = os.pidfd_open(self.proc.pid)
        self.loop.add_reader(self.pidfd, self._reap)
        self.waiting = True

    def _reap(self) -> None:
        assert self.pidfd is not None and self.proc is not None
        self.loop.remove_reader(self.pidfd)
        self.waiting = False
        self.code = self.proc.wait()  # it exited: no wait
        if self.exited is not None and not self.exited.done():
            self.exited.set_result(self.code)
        if self.reading and self.grace is None:  # what it left running may hold stdout
            self.grace = self.loop.call_later(EXIT_GRACE_S, self._give_up_reading)
        self._finish()

    def _give_up_reading(self) -> None:
        """The command exited ``EXIT_GRACE_S`` ago and its stdout is still open: the reply is
        complete; kill what it left running."""
        assert self.proc is not None
        _kill_group(self.proc.pid)
        if self.code is not None and not self.done.done():
            self.done.set_result(self.code)

    def _finish(self) -> None:
        if self.code is not None and not self.reading and not self.done.done():
            self.done.set_result(self.code)

    async def stop(self) -> None:
        """After a cancellation: wait for the start, then kill the command's group and reap it."""
        with self.lock:
            if self.proc is None and self.failed is None:
                self.on_start = self.loop.create_future()
        if self.on_start is not None:
            await self.on_start
        if self.proc is None or self.code is not None:
            return
        _kill_group(self.proc.pid)
        self.exited = self.loop.create_future()
        if self.pidfd is None:
            self._watch_exit()
        await self.exited

    def close(self) -> None:
        """Unregister what is still registered and close everything."""
        self._close_stdin()
        for timer in (self.watch, self.grace):
            if timer is not None:
                timer.cancel()
        if self.reading:
            self.loop.remove_reader(self.stdout_fd)
        os.close(self.stdout_fd)
        if self.pidfd is not None:
            if self.waiting:
                self.loop.remove_reader(self.pidfd)
            os.close(self.pidfd)


def _set_if_pending(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


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


async def _run_pidfd(
    argv: Sequence[str], stdin: bytes, cwd: str | None, env: Mapping[str, str] | None, stderr: IO[bytes], limit: int
) -> tuple[int, bytes]:
    loop = asyncio.get_running_loop()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        pending = _prefill(in_w, stdin)
        if not pending:
            os.close(in_w)
        os.set_blocking(out_r, False)
        child = _Child(loop, in_w if pending else None, pending, out_r, _Kept(limit))
    except BaseException:
        for fd in (in_r, in_w, out_r, out_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        raise
    try:
        _STARTER.start(functools.partial(child.start, argv, in_r, out_w, stderr, cwd, env))
    except BaseException:  # no thread could be made for it: nothing was started
        for fd in (in_r, out_w):
            os.close(fd)
        child.close()
        raise
    try:
        return await child.done, child.kept.data()
    except BaseException:
        with anyio.CancelScope(shield=True):
            await child.stop()
        raise
    finally:
        child.close()
