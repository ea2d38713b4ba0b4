"""What a reviewer's ranking of the sample rows reads of each task (``TaskFlags``), noted as the
report's one pass reads results.jsonl (``RowMarks``): the page then reads from the file only the
rows it shows (``knowmeter.report.html``), not every task again."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from knowmeter.report._fold import TaskKey
from knowmeter.store import TaskRecord


@dataclass(frozen=True, slots=True)
class TaskFlags:
    """One task as the row ranking sees it: whether its assertions all passed (None: none was
    evaluated), whether it ran without an execution error, whether it has an execution error, a
    judge error or a failed assertion, and whether it has a gap signal."""

    passed: bool | None
    ran: bool
    troubled: bool
    gaps: bool

    @classmethod
    def of_record(cls, task: TaskRecord) -> TaskFlags:
        grade, error = task.grade, task.exec.error
        gaps = task.analysis.gaps if task.analysis is not None else None
        return cls(
            passed=grade.passed if grade is not None else None,
            ran=error is None,
            troubled=bool(
                error or (grade is not None and (grade.judge_error or any(a.passed is False for a in grade.assertions)))
            ),
            gaps=bool(gaps is not None and gaps.get("signals")),
        )

    def code(self) -> int:
        """The flags in one byte (``from_code`` reads them back)."""
        passed = 0 if self.passed is None else 1 if self.passed else 2
        return passed | self.ran << 2 | self.troubled << 3 | self.gaps << 4

    @classmethod
    def from_code(cls, code: int) -> TaskFlags:
        passed = code & 3
        return cls(None if passed == 0 else passed == 1, bool(code & 4), bool(code & 8), bool(code & 16))


def rank(tasks: Iterable[TaskFlags]) -> int:
    """How much a sample row (its tasks, one per variant) needs a reviewer: 0 the variants
    disagree (one passes and another does not, or one has an execution error and another none),
    1 an execution error, a judge error or a failed assertion, 2 a gap signal (the gap inventory
    links to it), 3 the rest."""
    flags = list(tasks)
    if len({t.passed for t in flags}) > 1 or len({t.ran for t in flags}) > 1:
        return 0
    if any(t.troubled for t in flags):
        return 1
    if any(t.gaps for t in flags):
        return 2
    return 3


@dataclass(frozen=True)
class RowIndex:
    """The sample rows of a report's tasks (report order): row ``i`` holds the tasks
    ``starts[i]`` to ``starts[i + 1] - 1``, and each row's ``rank``."""

    starts: array[int]
    ranks: array[int]

    def __len__(self) -> int:
        return len(self.ranks)

    def tasks(self, row: int) -> range:
        return range(self.starts[row], self.starts[row + 1])


class RowMarks:
    """Folded over the task records the report keeps (``StoredTasks``' ``visit``: one call per
    kept task): each task's ``TaskFlags`` (one byte) and its row, held as columns (17 bytes a
    task); ``index`` gives the rows."""

    def __init__(self) -> None:
        self._repeats: array[int] = array("q")
        self._samples: list[str] = []
        self._codes: array[int] = array("B")

    def add(self, key: TaskKey, task: TaskRecord) -> None:
        self._repeats.append(key[0])
        self._samples.append(key[1])
        self._codes.append(TaskFlags.of_record(task).code())

    def index(self) -> RowIndex:
        """The rows in report order (the order ``StoredTasks`` reads the tasks in: a row's tasks
        are consecutive there, whatever order its variants are in)."""
        repeats, samples, codes = self._repeats, self._samples, self._codes
        starts: array[int] = array("q")
        ranks: array[int] = array("b")
        row: list[TaskFlags] = []
        last: tuple[int, str] | None = None
        for n, i in enumerate(sorted(range(len(codes)), key=lambda i: (repeats[i], samples[i]))):
            if (repeats[i], samples[i]) != last:
                if row:
                    ranks.append(rank(row))
                starts.append(n)
                row, last = [], (repeats[i], samples[i])
            row.append(TaskFlags.from_code(codes[i]))
        if row:
            ranks.append(rank(row))
        starts.append(len(codes))
        return RowIndex(starts, ranks)
