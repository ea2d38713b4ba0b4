"""Run directories: ``<output>/runs/<run-id>/`` with ``run.json``, ``results.jsonl``, ``report.json``.

``results.jsonl`` is appended and flushed as each task finishes, so a killed run loses at most
the line being written; readers skip a truncated last line and ``ResultsWriter`` cuts it off
before appending again.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from knowmeter import jsonio
from knowmeter._secrets import scrub_bytes
from knowmeter.errors import InputError

if TYPE_CHECKING:
    from knowmeter.store._runrecord import RunRecord
    from knowmeter.store._taskrecord import TaskRecord

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
REPORT_FILE = "report.json"
LOCK_FILE = ".lock"


#: a run id as ``new_run_id`` makes them (a folder of ``runs/`` named otherwise was not made by knowmeter)
RUN_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")


def new_run_id(now: float | None = None) -> str:
    """``YYYYMMDD-HHMMSS-<6 hex>``: the millisecond as 3 hex digits, then 3 random ones, so ids
    sort in the order the runs started (``latest`` is the newest even within one second) and two
    runs started in the same millisecond still differ."""
    now = time.time() if now is None else now
    millisecond = int(now % 1 * 1000)
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(now)) + f"-{millisecond:03x}{secrets.randbelow(16**3):03x}"


class ScrubbedFile:
    """A binary file whose every ``write`` has its secrets scrubbed first (``knowmeter._secrets``);
    each write must be whole JSON tokens (a secret is never split between two writes)."""

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh = fh

    def write(self, data: bytes) -> int:
        return self._fh.write(scrub_bytes(data))


@contextmanager
def atomic_file(path: Path, *, scrub: bool = True) -> Iterator[ScrubbedFile | IO[bytes]]:
    """A file to write ``path``'s new content to (secrets scrubbed, unless ``scrub`` is false: a
    user's own file rewritten, whose text is theirs): it replaces ``path`` (fsynced, with the
    permission bits of the file it replaces) when the block ends without an error, so a reader
    never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with _naming(path), tmp.open("wb") as fh:
            yield ScrubbedFile(fh) if scrub else fh
            fh.flush()
            if path.exists():
                os.fchmod(fh.fileno(), stat.S_IMODE(path.stat().st_mode))
            os.fsync(fh.fileno())
        with _naming(path):
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """An ``OSError`` without a file name (a write to a full disk) gets ``path`` as its name, so
    the one line about it says which file (``knowmeter._faults``)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def write_json_atomic(path: Path, data: Any, *, indent: int | None = 2) -> None:
    """Write JSON to ``path`` via a temp file and rename (never a half-written file).
    ``indent=None`` writes compact, strict JSON (``knowmeter.jsonio``)."""
    with atomic_file(path) as fh:
        if indent is None:
            fh.write(jsonio.dumps(data))
        else:
            fh.write(json.dumps(data, ensure_ascii=False, indent=indent).encode())
        fh.write(b"\n")


def read_json(path: Path) -> Any:
    """A stored JSON file; a missing, unreadable, non-UTF-8 or invalid one raises ``InputError``."""
    try:
        raw = path.read_bytes()
        data = jsonio.loads(raw)
        if _LONG_DIGITS.search(raw) and _too_large(data):
            raise InputError(f"{path}: holds an integer past 64 bits; the file was edited or damaged")
        return data
    except FileNotFoundError:
        raise InputError(f"{path}: not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        where = f"line {exc.lineno}: " if isinstance(exc, json.JSONDecodeError) else ""
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc).splitlines()[0]
        raise InputError(f"{path}: {where}invalid JSON ({msg}); the file was edited or damaged") from None


_LONG_DIGITS = re.compile(rb"\d{19}")


def _too_large(data: Any) -> bool:
    """Whether ``data`` holds an integer no stored field can take (past 64 bits: not writable
    again, not a float)."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, int) and not -(2**63) <= node < 2**63:
            return True
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def iter_results(path: Path, *, strict: bool = False, problems: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Stream result records. A truncated last line (from a killed run) is always skipped; a
    damaged line elsewhere is skipped too, or with ``strict`` raises ``InputError`` naming it.
    Each skipped line is described in ``problems`` when given (so a reader can say so)."""
    for _, record in iter_results_at(path, strict=strict, problems=problems):
        yield record


def iter_lines_at(path: Path, *, problems: list[str] | None = None) -> Iterator[tuple[int, int, bytes]]:
    """The complete, non-blank lines of a results file as ``(byte offset, line number, line)``;
    a truncated last line (from a killed run) is skipped and described in ``problems``."""
    if not path.exists():
        return
    offset = 0
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            at, offset = offset, offset + len(line)
            if not line.endswith(b"\n"):
                if problems is not None:
                    problems.append(f"line {number}: cut off (the run was stopped while writing it); not counted")
                return  # the line being written when the run died
            if line.strip():
                yield at, number, line


def iter_results_at(
    path: Path, *, strict: bool = False, problems: list[str] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``iter_results`` with each record's byte offset in the file (to read it again later)."""
    for at, number, line in iter_lines_at(path, problems=problems):
        record = json_object(path, number, line, strict=strict, problems=problems)
        if record is not None:
            yield at, record


def json_object(
    path: Path, number: int, line: bytes, *, strict: bool = False, problems: list[str] | None = None
) -> dict[str, Any] | None:
    """Line ``number`` of a results file as its JSON object; None (said in ``problems``) when it
    is not JSON or not an object — or with ``strict`` one ``InputError`` naming the line."""
    try:
        record = jsonio.loads(line)
    except ValueError:
        if strict:
            raise InputError(f"{path}: line {number}: not valid JSON; the results file is damaged") from None
        if problems is not None:
            problems.append(f"line {number}: not valid JSON; not counted")
        return None
    if isinstance(record, dict):
        return record
    if strict:
        raise InputError(f"{path}: line {number}: expected a JSON object per line")
    if problems is not None:
        problems.append(f"line {number}: not a JSON object; not counted")
    return None


#: results.jsonl is fsynced at most this often while a run appends to it, and when it is closed: a
#: killed process loses nothing (every line is flushed at once), a power loss at most this long
#: of a run's results (bench/bench_runner.py measures the cost)
FSYNC_EVERY_S = 1.0


class ResultsWriter:
    """Appends one JSON line per finished task and flushes it at once (strict JSON: a
    non-finite number is stored as null); fsyncs every ``FSYNC_EVERY_S`` and on close."""

    def __init__(self, path: Path) -> None:
        self.path = path
        _cut_partial_last_line(path)
        self._fh: IO[bytes] = path.open("ab")
        self._synced = time.monotonic()

    def append(self, record: TaskRecord) -> None:
        with _naming(self.path):
            self._fh.write(scrub_bytes(record.line()) + b"\n")
            self._fh.flush()
            if time.monotonic() - self._synced >= FSYNC_EVERY_S:
                os.fsync(self._fh.fileno())
                self._synced = time.monotonic()

    def close(self) -> None:
        with _naming(self.path):
            try:
                self._fh.flush()
                os.fsync(self._fh.fileno())
            finally:
                self._fh.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cut_partial_last_line(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        size = fh.seek(0, os.SEEK_END)
        pos = size
        chunk = 4096
        while pos > 0:
            start = max(0, pos - chunk)
            fh.seek(start)
            data = fh.read(pos - start)
            idx = data.rfind(b"\n")
            if idx >= 0:
                fh.truncate(start + idx + 1)
                return
            pos = start
        fh.truncate(0)


class RunDir:
    """One run's directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock: IO[str] | None = None

    def lock(self) -> None:
        """Hold an exclusive lock on the run while this process executes it (released when the
        process ends, or on ``unlock``); ``InputError`` when another process holds it."""
        import fcntl

        if self._lock is not None:
            return
        fh = (self.path / LOCK_FILE).open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip()
            fh.close()
            raise InputError(
                f"run {self.id} is being executed by another knowmeter process"
                f"{f' (pid {holder})' if holder else ''}; wait for it to finish"
            ) from None
        fh.truncate(0)
        fh.write(str(os.getpid()))
        fh.flush()
        self._lock = fh

    @property
    def executing(self) -> bool:
        """Whether a process (this one included) holds the run's ``lock``: it is executing the run."""
        import fcntl

        try:
            fh = (self.path / LOCK_FILE).open("rb")
        except OSError:  # never locked
            return False
        with fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
        return False  # closing the file released the shared lock

    def unlock(self) -> None:
        """Release the lock ``lock`` took (a library caller's process goes on after the run)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def store(self) -> Path | None:
        """The store (``<output>/``) this run directory is in, found from where it lies now;
        None for a run directory that is not inside a store's ``runs/``."""
        return self.path.parent.parent if self.path.parent.name == "runs" else None

    @property
    def run_file(self) -> Path:
        return self.path / RUN_FILE

    @property
    def results_file(self) -> Path:
        return self.path / RESULTS_FILE

    @property
    def report_file(self) -> Path:
        return self.path / REPORT_FILE

    @classmethod
    def create(cls, runs_root: Path) -> RunDir:
        """A new, empty run folder under ``runs_root`` (created with its parents); one
        ``InputError`` line when the store cannot hold it (a file where a folder belongs, no
        permission)."""
        try:
            runs_root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"{runs_root}: cannot create the runs folder ({exc.strerror}); point --output-dir "
                "(output_dir in eval.yaml) at a folder you can write"
            ) from None
        while True:
            path = runs_root / new_run_id()
            try:
                path.mkdir()
                return cls(path)
            except FileExistsError:
                continue

    def read_run(self) -> RunRecord:
        """``run.json``, checked (one ``InputError`` line for an edited or damaged file)."""
        from knowmeter.store._runrecord import check_run_record

        return check_run_record(read_json(self.run_file), str(self.run_file))

    def write_run(self, record: RunRecord) -> None:
        """Write ``record`` as ``run.json`` (atomically; the keys it was read or built with)."""
        write_json_atomic(self.run_file, record.stored())

    def results(self, problems: list[str] | None = None) -> Iterator[dict[str, Any]]:
        return iter_results(self.results_file, problems=problems)


def find_run(output_dir: Path, run: str) -> RunDir:
    """Resolve a run id (or unique prefix, or ``latest``, or a path) to its directory."""
    as_path = Path(run)
    if (as_path / RUN_FILE).is_file():
        return RunDir(as_path)
    runs_root = output_dir / "runs"
    if not runs_root.is_dir():
        raise InputError(f"no runs in {runs_root}; run knowmeter eval first")
    ids = sorted(p.name for p in runs_root.iterdir() if (p / RUN_FILE).is_file())
    if run == "latest":  # the newest run knowmeter made (ids sort by start), not a folder copied in beside it
        made = [i for i in ids if RUN_ID.fullmatch(i)] or ids
        if not made:
            raise InputError(f"no runs in {runs_root}; run knowmeter eval first")
        return RunDir(runs_root / made[-1])
    matches = [i for i in ids if i == run] or [i for i in ids if i.startswith(run)]
    if len(matches) == 1:
        return RunDir(runs_root / matches[0])
    if not matches:
        recent = ", ".join(ids[-3:]) or "none"
        raise InputError(f"run {run!r} not found in {runs_root}; recent runs: {recent} (see knowmeter runs)")
    raise InputError(f"run {run!r} is ambiguous: {', '.join(matches[:5])}; give more of the id")
