"""Faults of the machine rather than of knowmeter: a full disk, a read-only or forbidden folder,
no file descriptor or memory left, the agents' working folder gone mid-run, a database another
process holds locked (and a path the file system cannot take — too long, a NUL byte, a file where
a folder is needed — from a name in the input).

``environment_fault`` finds one anywhere in an exception (an ``ExceptionGroup`` from a task
group, a ``__cause__`` / ``__context__`` chain) and says in one line what the user can do; the
commands then exit 2 instead of reporting a bug. What was written stays (results are appended
task by task), so a stopped ``eval`` continues with ``--resume``.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path

_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_DENIED = frozenset({errno.EACCES, errno.EPERM})
#: what every later task would hit too, so a run stops on it instead of recording it as a task's failure
_EVERY_TASK = frozenset({"full", "process-files", "system-files", "work-folder"})


class WorkFolderLost(OSError):
    """The folder an agent is started in cannot be entered (deleted, moved or made unreadable
    during the run): ``filename`` is the folder, ``strerror`` why."""


def environment_fault(exc: BaseException) -> str | None:
    """One line for an exception caused by a full disk or a folder that cannot be written (the
    first such cause found in ``exc``), or None when it is something else."""
    for cause in _causes(exc):
        kind = _kind(cause)
        if kind is None:
            continue
        path = getattr(cause, "filename", None)
        shown = str(path) if path and len(str(path)) <= 300 else f"{str(path)[:300]}…"
        where = f" ({shown})" if path else ""
        then = _then(Path(str(path)) if path else None)
        if kind == "work-folder":
            why = getattr(cause, "strerror", None) or "unusable"
            return (
                f"the agents' working folder {shown} cannot be entered ({why}): it was deleted, moved or made "
                f"unreadable during the run; restore it, then {then}"
            )
        if kind == "too-long":
            return f"a file name or path is too long{where}: use a shorter name"
        if kind == "busy":
            return (
                "a knowmeter database (the run index or the response cache) is locked by another process "
                f"({cause}): wait for it to finish, or close the program holding it, then {then}"
            )
        if kind == "not-a-folder":
            return f"a file stands where a folder is needed{where}: move the file, or choose another path"
        if kind == "process-files":
            return (
                f"too many open files: this process may hold {_open_files_limit()} at once (ulimit -n); raise the "
                f"limit (e.g. ulimit -n 4096) or run fewer tasks at once (--concurrency), then {then}"
            )
        if kind == "system-files":
            return (
                "the system's table of open files is full (ENFILE): close other programs or raise the system's "
                f"limit (fs.file-max), then {then}"
            )
        if kind == "memory":
            return (
                f"out of memory: free memory, or raise this process's limit (ulimit -v) or the container's, then {then}"
            )
        if kind == "nul":
            return "a file name or path holds a NUL character (\\0): remove it from the input"
        if kind == "full":
            return f"no space left on the device{where}: free space (or point --output-dir elsewhere), then {then}"
        if kind == "denied":
            return (
                f"permission denied{where}: make it readable and writable for you (or point --output-dir at a "
                f"folder you can write), then {then}"
            )
        return (
            f"cannot write{where}: the file system is read-only; make it writable (or point "
            f"--output-dir at a folder you can write), then {then}"
        )
    return None


def stops_every_task(exc: BaseException) -> bool:
    """True when ``exc`` (or one of its causes) is a fault of the machine that every later task
    would hit too — a full disk, no file descriptor left — so that a run stops on it (resumable)
    instead of recording it as one task's failure."""
    return any(_kind(cause) in _EVERY_TASK for cause in _causes(exc))


def _open_files_limit() -> str:
    import resource  # POSIX only; read when the fault is met

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return "any number" if soft == resource.RLIM_INFINITY else f"{soft:,}"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)


def _kind(exc: BaseException) -> str | None:
    if isinstance(exc, WorkFolderLost):
        return "work-folder"
    if isinstance(exc, ValueError) and str(exc) == "embedded null byte":  # os.stat of such a path
        return "nul"
    if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM):
        return "memory"
    if isinstance(exc, ImportError) and "failed to map segment" in str(exc):  # a library's code could not be mapped
        return "memory"
    if isinstance(exc, OSError) and exc.errno in _FULL:
        return "full"
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return "read-only"
    if isinstance(exc, OSError) and exc.errno in _DENIED:
        return "denied"
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return "too-long"
    if isinstance(exc, OSError) and exc.errno == errno.ENOTDIR:
        return "not-a-folder"
    if isinstance(exc, OSError) and exc.errno == errno.EMFILE:
        return "process-files"
    if isinstance(exc, OSError) and exc.errno == errno.ENFILE:
        return "system-files"
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        if "disk is full" in text or "disk full" in text:
            return "full"
        if "readonly database" in text:
            return "read-only"
        if "unable to open database" in text:
            return "denied"
        if "is locked" in text:  # another process holds it past the busy timeout: not damage
            return "busy"
    return None


def _then(path: Path | None) -> str:
    """What to run once the disk has room again (naming the run when ``path`` is in a run's folder)."""
    for folder in [path, *path.parents] if path is not None else []:
        try:
            in_run = folder.parent.name == "runs" and (folder / "run.json").is_file()
        except OSError:  # the path itself is the fault (too long)
            break
        if in_run:
            return f"run the command again (a stopped eval continues with knowmeter eval --resume {folder.name})"
    return "run the command again (a stopped eval continues with knowmeter eval --resume latest)"
