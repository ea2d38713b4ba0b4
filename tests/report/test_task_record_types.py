"""The report reads task records as the typed ``TaskRecord`` (issue 36 point 1): every field it
reads is a typed field of the record, named as its producer names it, so a rename at the producer
fails here and a stored value of the wrong type is one line naming the task and field — never a
value silently read as unknown."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel

from knowmeter.errors import InputError
from knowmeter.grading import AssertionResult, Grade, JudgeOutcome
from knowmeter.pipeline import rebuild_report
from knowmeter.store import AssertionRecord, GradeRecord, JudgeRecord, RunDir


@pytest.mark.parametrize(
    ("reader", "producer"),
    [(GradeRecord, Grade), (AssertionRecord, AssertionResult), (JudgeRecord, JudgeOutcome)],
)
def test_every_field_the_report_reads_is_one_its_producer_writes(
    reader: type[BaseModel], producer: type[BaseModel]
) -> None:
    assert set(reader.model_fields) <= set(producer.model_fields)


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
