"""The row ranking the page reads from the report's one pass (issue 32): each task's flags, taken
from its typed record as the results are read, are those the page's task view has, and pack
into one byte and back unchanged."""

from __future__ import annotations

import itertools
from pathlib import Path

from knowmeter import jsonio
from knowmeter.report._rows import RowMarks, TaskFlags, rank
from knowmeter.report._view import _task_view
from knowmeter.store import TaskRecord

RESULTS = Path(__file__).parent / "golden" / "demo" / "results.jsonl"


def test_the_flags_of_a_record_are_those_of_its_task_view() -> None:
    seen = set()
    for line in RESULTS.read_bytes().splitlines():
        flags = TaskFlags.of_record(TaskRecord.model_validate_json(line))
        assert flags == _task_view(jsonio.loads(line)).flags
        seen.add(flags)
    assert len(seen) >= 3 and {f.troubled for f in seen} == {True, False} and {f.gaps for f in seen} == {True, False}


def test_flags_pack_into_a_byte_and_back() -> None:
    both = (True, False)
    for passed, ran, troubled, gaps in itertools.product((None, True, False), both, both, both):
        flags = TaskFlags(passed, ran, troubled, gaps)
        assert TaskFlags.from_code(flags.code()) == flags and 0 <= flags.code() < 32


def test_rows_in_report_order_whatever_order_the_tasks_came_in() -> None:
    """Rows are (repeat, sample) in report order; a row's rank is that of all its variants."""
    records = [TaskRecord.model_validate_json(line) for line in RESULTS.read_bytes().splitlines()]
    ok = next(t for t in records if TaskFlags.of_record(t) == TaskFlags(True, True, False, False))
    failed = next(t for t in records if t.grade is not None and t.grade.passed is False)
    marks = RowMarks()
    for key, task in [((1, "a", "x"), ok), ((0, "b", "y"), failed), ((0, "a", "y"), ok), ((0, "b", "x"), ok)]:
        marks.add(key, task)
    index = marks.index()
    assert list(index.starts) == [0, 1, 3, 4]  # (0, a): one task, (0, b): two, (1, a): one
    assert list(index.ranks) == [3, 0, 3] and rank([TaskFlags.of_record(ok)]) == 3
    assert [list(index.tasks(i)) for i in range(len(index))] == [[0], [1, 2], [3]]
