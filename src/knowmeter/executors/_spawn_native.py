"""``run_command``'s native path: the loop side of ``_native_spawn`` (the C worker threads).

One ``Batch`` per event loop; its eventfd is registered with the loop once, and one callback
drains every command that finished since, resolving each one's future. A cancellation kills the
command's process group and waits (shielded) until its worker reaped it. A forked child starts
with no batch (the parent's are left alone: their threads are not in the child).
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Protocol, cast

import anyio


class Batch(Protocol):
    """What this module uses of ``_native_spawn.Batch`` (its stub, ``_native_spawn.pyi``, says
    what each does)."""

    def fileno(self) -> int: ...

    def submit(
        self,
        argv: Sequence[str],
        executables: Sequence[bytes] | None,
        env: Mapping[str, str] | None,
        cwd: str | None,
        stdin: bytes,
        stderr: int,
        grace: float,
        limit: int,
    ) -> int: ...

    def drain(self) -> list[tuple[int, tuple[int, bytes] | None, tuple[int, bytes] | None]]: ...

    def kill(self, job: int, /) -> None: ...


def load() -> Callable[[], Batch] | None:
    """``_native_spawn.Batch`` when the extension is built and loads here, unless
    ``KNOWMETER_SPAWN=python`` turns it off; else None. (Loaded by name: a compiled module.)"""
    if os.environ.get("KNOWMETER_SPAWN", "").strip().lower() == "python":
        return None
    try:
        module = importlib.import_module("knowmeter.executors._native_spawn")
    except ImportError:  # not built (no C compiler at install), or not Linux with glibc >= 2.34
        return None
    return cast("Callable[[], Batch]", module.Batch)


#: What a command's future resolves to: (exit code, stdout), or None when it was killed before it
#: started (only a cancellation awaits that).
_Reply = tuple[int, bytes] | None


class _LoopBatch:
    """One event loop's commands: the ``Batch`` that runs them and the futures awaiting them."""

    def __init__(self, new_batch: Callable[[], Batch], loop: asyncio.AbstractEventLoop) -> None:
        self.batch = new_batch()
        self.waiting: dict[int, asyncio.Future[_Reply]] = {}
        loop.add_reader(self.batch.fileno(), self._drain)

    def _drain(self) -> None:
        for job, reply, failure in self.batch.drain():
            future = self.waiting.pop(job, None)
            if future is None or future.done():  # (its task was cancelled: the job is gone with it)
                continue
            if failure is not None:
                code, name = failure
                future.set_exception(OSError(code, os.strerror(code), os.fsdecode(name)))
            else:
                future.set_result(reply)


_BATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopBatch] = weakref.WeakKeyDictionary()

os.register_at_fork(after_in_child=_BATCHES.clear)


@functools.lru_cache(maxsize=64)
def _search_path(program: str, path: str | None) -> tuple[bytes, ...]:
    """Where ``program`` is looked for, in order: each directory of ``path`` (``os.defpath`` when
    unset), as ``subprocess`` looks (an empty entry is the command's working directory)."""
    dirs = os.get_exec_path({} if path is None else {"PATH": path})
    return tuple(os.fsencode(os.path.join(d, program)) for d in dirs)


def executables(program: str, env: Mapping[str, str] | None) -> tuple[bytes, ...] | None:
    """The paths to try for ``program``: None when it names a path (used as it is), else a PATH
    lookup in the *given* environment's PATH (the process's when ``env`` is None)."""
    if os.sep in program:
        return None
    return _search_path(program, (os.environ if env is None else env).get("PATH"))


async def run_native(
    new_batch: Callable[[], Batch],
    argv: Sequence[str],
    stdin: bytes,
    cwd: str | None,
    env: Mapping[str, str] | None,
    stderr: IO[bytes],
    grace_s: float,
    limit: int,
) -> tuple[int, bytes]:
    """``run_command`` through the native spawner (``new_batch``: ``_native_spawn.Batch``);
    ``grace_s`` is its ``EXIT_GRACE_S``, ``limit`` its stdout limit."""
    loop = asyncio.get_running_loop()
    batch = _BATCHES.get(loop)
    if batch is None:
        batch = _BATCHES[loop] = _LoopBatch(new_batch, loop)
    exes = executables(os.fsdecode(argv[0]), env)
    job = batch.batch.submit(argv, exes, env, cwd, stdin, stderr.fileno(), grace_s, limit)
    done: asyncio.Future[_Reply] = loop.create_future()
    batch.waiting[job] = done
    try:
        reply = await done
    except BaseException:
        if job in batch.waiting:  # still running (or queued): kill its group, wait until it is reaped
            batch.batch.kill(job)
            reaped: asyncio.Future[_Reply] = loop.create_future()
            batch.waiting[job] = reaped
            with anyio.CancelScope(shield=True):
                await reaped
        raise
    assert reply is not None  # (None only for a job killed before it started)
    return reply
