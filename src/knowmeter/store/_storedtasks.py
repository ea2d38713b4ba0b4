"""A run's stored task records, read from ``results.jsonl`` in one pass, never all held in memory.

``StoredTasks`` reads the file once: it checks each record (against ``TaskRecord``, one record per
task id, inside the run's plan) and hands each kept one to ``visit`` — the report's sections fold
it into what they need (``knowmeter.report``) — and keeps only each kept record's byte offset, in
report order. A reader that shows tasks (the HTML page, ``knowmeter show``) reads them from disk
again by offset, one at a time, so memory holds the statistics' inputs, not the records
(``bench/bench_memory.py``).
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, cast, overload

from pydantic import ValidationError

from knowmeter import jsonio
from knowmeter.config import first_error
from knowmeter.errors import InputError
from knowmeter.store._rundir import iter_lines_at, iter_results_at, json_object
from knowmeter.store._runrecord import RunRecord
from knowmeter.store._taskjson import TaskJSON
from knowmeter.store._taskrecord import TaskRecord, task_id


class _Plan:
    """What a run planned (from its run.json): which variants in which role, how many repeats and
    how many samples. A stored record outside it was edited in, or belongs to another run."""

    def __init__(self, run: RunRecord) -> None:
        self.roles = {v.name: v.role for v in run.variants}
        self.repeats = run.config.repeat
        self.samples = -(-run.tasks_total // (len(self.roles) * self.repeats))
        if run.sequential is not None:
            # a sequential run stopped early keeps a reused control's records of the later samples
            self.samples = max(self.samples, run.sequential.planned_samples)

    def problem(self, task: TaskRecord) -> str | None:
        """Why ``task`` is not one of the plan's tasks (None when it is)."""
        if task.variant not in self.roles:
            return f"variant {task.variant!r} is not one of the run's variants ({', '.join(self.roles)})"
        if task.role != self.roles[task.variant]:
            return f"role {task.role!r}: variant {task.variant!r} is the run's {self.roles[task.variant]}"
        if task.repeat >= self.repeats:
            return f"repeat {task.repeat} is outside the run's {self.repeats} repeat(s) (0–{self.repeats - 1})"
        expected = task_id(task.sample_id, task.variant, task.repeat)
        if task.task_id != expected:
            return f"task_id does not match its sample_id, variant and repeat (those make {expected!r})"
        return None


class StoredTasks(Sequence[TaskRecord]):
    """The task records of ``results_file`` in report order (repeat, sample, variant), read again
    from the file on each use: as ``TaskRecord`` models (iterating, indexing) or as the stored
    JSON objects (``records``).

    ``problems`` says which lines were not counted (cut off, not JSON) and how many duplicate
    records of a task were dropped (the first stored counts); ``variants`` are the variants with
    at least one record. An edited or damaged record — a field of the wrong type or out of
    range, or a task outside the plan of ``run`` (its run.json) — raises one ``InputError`` line naming the task
    and field; so does a missing file.

    ``visit`` is called once per kept record as the file is read (in file order), with the task's
    place in the report's order ``(repeat, sample_id, variant)`` and the record as read."""

    def __init__(
        self,
        results_file: Path,
        run: RunRecord,
        visit: Callable[[tuple[int, str, str], TaskRecord], None] | None = None,
    ) -> None:
        plan = _Plan(run)
        self.path = results_file
        self.problems: list[str] = []
        self.variants: set[str] = set()
        if not results_file.is_file():
            what = "not a regular file (a folder, a pipe or a device)" if results_file.exists() else "missing"
            raise InputError(
                f"{results_file}: {what} — the run's results were deleted, moved or replaced: restore the file, or "
                "run knowmeter eval again"
            )
        first_at: dict[tuple[int, str, str], int] = {}  # each kept task's offset, by its report-order key
        extra: dict[tuple[int, str, str], int] = {}  # duplicate records of a task, not counted
        samples: set[str] = set()
        for offset, task in _read(results_file, self.problems):
            if isinstance(task, str):
                self.problems.append(f"{task}; not counted, a --resume runs it again")
                continue
            problem = plan.problem(task)
            if problem:
                raise InputError(f"{results_file}: task {task.task_id!r}: {problem}; {_FIX}")
            # one key per task, shared by every fold; its names interned (a sample's tasks share them)
            key = (task.repeat, sys.intern(task.sample_id), sys.intern(task.variant))
            if key in first_at:
                extra[key] = extra.get(key, 0) + 1
                continue
            first_at[key] = offset
            if visit is not None:
                visit(key, task)
            self.variants.add(key[2])
            samples.add(key[1])
        if len(samples) > plan.samples:
            raise InputError(
                f"{results_file}: records of {len(samples)} samples, but the run planned {plan.samples}: a "
                f"sample_id was edited or records of another run were added; {_FIX}"
            )
        self._offsets = array("q", [first_at[key] for key in sorted(first_at)])  # 8 bytes a task
        if extra:
            repeat, sample, variant = min(extra, key=first_at.__getitem__)  # the first stored
            self.problems.append(
                f"{sum(extra.values())} duplicate record(s) of {len(extra)} task(s) "
                f"(e.g. {task_id(sample, variant, repeat)!r}) counted once"
            )

    def __len__(self) -> int:
        return len(self._offsets)

    @overload
    def __getitem__(self, index: int) -> TaskRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[TaskRecord]: ...

    def __getitem__(self, index: int | slice) -> TaskRecord | list[TaskRecord]:
        with self.path.open("rb") as fh:
            if isinstance(index, slice):
                return [_task_at(fh, at) for at in self._offsets[index]]
            return _task_at(fh, self._offsets[index])

    def __iter__(self) -> Iterator[TaskRecord]:
        with self.path.open("rb") as fh:
            for at in self._offsets:
                yield _task_at(fh, at)

    def records(self) -> Iterator[TaskJSON]:
        """The records as stored (JSON objects, checked when the file was read), one at a time."""
        return self.records_at(range(len(self._offsets)))

    def records_at(self, positions: Iterable[int]) -> Iterator[TaskJSON]:
        """The records at ``positions`` of the report order, as stored, one at a time (the other
        records are not read)."""
        with self.path.open("rb") as fh:
            for i in positions:
                yield cast("TaskJSON", _read_at(fh, self._offsets[i]))


class JoinedTasks(Sequence[TaskRecord]):
    """The ``StoredTasks`` of a results file, read (and checked against the run's record, which
    ``read_run`` gives) when first used: a reader of report.json that shows only the aggregates
    never reads the task records it refers to."""

    def __init__(self, results_file: Path, read_run: Callable[[], RunRecord]) -> None:
        self._path, self._read_run = results_file, read_run
        self._tasks: StoredTasks | None = None

    @property
    def stored(self) -> StoredTasks:
        """The tasks (the file is read on first use)."""
        if self._tasks is None:
            self._tasks = StoredTasks(self._path, self._read_run())
        return self._tasks

    def __len__(self) -> int:
        return len(self.stored)

    @overload
    def __getitem__(self, index: int) -> TaskRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[TaskRecord]: ...

    def __getitem__(self, index: int | slice) -> TaskRecord | list[TaskRecord]:
        return self.stored[index]

    def __iter__(self) -> Iterator[TaskRecord]:
        return iter(self.stored)

    def records(self) -> Iterator[TaskJSON]:
        """The records as stored (JSON objects), one at a time, in report order."""
        return self.stored.records()


#: fields every record has (``grade`` may be null, but a record without it was cut or damaged)
_ALWAYS = ("grade",)


def _lacking(rec: dict[str, Any]) -> str | None:
    """``<field>: missing`` for the first field a record lacks at its top level, else None."""
    for name in (*(n for n, f in TaskRecord.model_fields.items() if f.is_required()), *_ALWAYS):
        if name not in rec:
            return f"{name}: missing"
    return None


def incomplete(exc: ValidationError) -> bool:
    """Whether a record failed only for top-level fields it lacks (a damaged or cut record; a
    nested field missing or a value of the wrong type was edited)."""
    return all(err["type"] == "missing" and len(err["loc"]) == 1 for err in exc.errors())


def finished_task_ids(results_file: Path) -> set[str]:
    """The ids of the tasks ``results_file`` holds a complete record of (what a resume need not run
    again): a line that is cut off, not JSON or lacks a field does not count."""
    done = set()
    for _, rec in iter_results_at(results_file):
        if _lacking(rec):
            continue
        try:
            done.add(TaskRecord.model_validate(rec).task_id)
        except ValidationError as exc:
            if not incomplete(exc) and isinstance(rec.get("task_id"), str):
                done.add(rec["task_id"])  # an edited value: the report names it, a rerun would not fix it
    return done


def task_records(results_file: Path, problems: list[str] | None = None) -> Iterator[TaskRecord]:
    """Every complete task record of ``results_file`` in file order, checked as ``TaskRecord``; a
    line that is cut off, not JSON or lacks a field is skipped (said in ``problems``), one whose
    field was edited to the wrong type raises one ``InputError`` line naming the task and field."""
    for _, task in _read(results_file, problems):
        if isinstance(task, TaskRecord):
            yield task
        elif problems is not None:
            problems.append(f"{task}; not counted")


def _read(path: Path, problems: list[str] | None) -> Iterator[tuple[int, TaskRecord | str]]:
    """``(byte offset, task)`` for each record of a results file, or why the record is incomplete
    (``_task_of``). A line is checked straight from its bytes (``model_validate_json``: no JSON
    objects are built); only a line that does not pass is parsed again to say why."""
    n = 0
    for at, number, line in iter_lines_at(path, problems=problems):
        try:
            fast: TaskRecord | None = TaskRecord.model_validate_json(line)
        except ValidationError:
            fast = None
        task: TaskRecord | str
        if fast is not None and "grade" in fast.model_fields_set:
            task = fast
        else:  # parsed again, to name the problem
            rec = json_object(path, number, line, problems=problems)
            if rec is None:
                continue
            task = _task_of(path, rec, n + 1)
        n += 1
        if isinstance(task, TaskRecord):
            _check_known(path, task)
        yield at, task


def _task_at(fh: IO[bytes], offset: int) -> TaskRecord:
    """The record stored at ``offset`` (checked when the file was first read)."""
    fh.seek(offset)
    line = fh.readline()
    try:
        return TaskRecord.model_validate_json(line)
    except ValidationError:  # a NaN token or a lone surrogate escape: read as when it was checked
        return TaskRecord.model_validate(jsonio.loads(line))


def _read_at(fh: IO[bytes], offset: int) -> dict[str, Any]:
    fh.seek(offset)
    rec: dict[str, Any] = jsonio.loads(fh.readline())
    return rec


_FIX = "the results file was edited or damaged: restore it or run knowmeter eval again"


def _task_of(path: Path, rec: dict[str, Any], n: int) -> TaskRecord | str:
    """The stored line ``rec`` (record ``n``) as a ``TaskRecord``, or why it is incomplete — a
    field missing: its task is missing, and a resume runs it again. One ``InputError`` line naming
    the task and field when it does not fit otherwise (a value edited to the wrong type)."""
    where = f"task {rec['task_id']!r}" if isinstance(rec.get("task_id"), str) else f"record {n}"
    lacks = _lacking(rec)
    try:
        task = TaskRecord.model_validate(rec)
    except ValidationError as exc:
        if not incomplete(exc):
            raise InputError(f"{path}: {where}: {first_error(exc)}; {_FIX}") from None
        lacks = lacks or first_error(exc)
    return f"record {n} ({where}): incomplete ({lacks})" if lacks else task


def _check_known(path: Path, task: TaskRecord) -> None:
    """One ``InputError`` line when the trace metadata the report reads has a wrong type."""
    try:
        _ = task.exec.trace.known if task.exec.trace is not None else None
    except ValidationError as exc:
        raise InputError(f"{path}: task {task.task_id!r}: exec.trace.meta.{first_error(exc)}; {_FIX}") from None
