"""The report reads task records as the typed ``TaskRecord`` (issue 36 point 1): every field it
reads is a typed field of the record, named as its producer names it, so a rename at the producer
fails here and a stored value of the wrong type is one line naming the task and field — never a
value silently read as unknown."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from knowmeter.errors import InputError
from knowmeter.executors import ExecResult
from knowmeter.grading import Grade
from knowmeter.pipeline import rebuild_report
from knowmeter.store import ExecRecord, RunDir, TaskRecord


def test_the_stored_exec_result_has_the_fields_of_its_producer() -> None:
    assert set(ExecRecord.model_fields) == {f.name for f in dataclasses.fields(ExecResult)}


def test_the_stored_grade_is_the_type_grading_produces() -> None:
    assert TaskRecord.model_fields["grade"].annotation == Grade | None


@pytest.mark.parametrize(
    ("field", "value"),
    [("judge_error", 5), ("output_truncated", "cut"), ("judges", [{"judge": "j", "model": 7}])],
)
def test_a_stored_grade_field_of_the_wrong_type_is_one_line_naming_it(
    demo_run: Path, tmp_path: Path, field: str, value: object
) -> None:
    copy = tmp_path / "store" / "runs" / demo_run.name
    shutil.copytree(demo_run, copy)
    results = copy / "results.jsonl"
    lines = results.read_text().splitlines()
    first = json.loads(lines[0])
    first["grade"][field] = value
    results.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(InputError, match=rf"task '{first['task_id']}': grade\.{field}"):
        rebuild_report(RunDir(copy))
