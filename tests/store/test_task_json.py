"""The stored-JSON view of a task record (``TaskJSON`` and its parts) has exactly the fields of the
models it mirrors: a field renamed, added or removed on either side fails here, so a reader of the
stored JSON (the page, ``knowmeter show``, the gold comparison), whose keys mypy checks against
``TaskJSON``, cannot keep reading a key the record no longer has."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from knowmeter.store import (
    AnalysisJSON,
    AssertionJSON,
    ExecRecord,
    GradeJSON,
    JudgeJSON,
    LayersJSON,
    TaskJSON,
    TaskRecord,
)
from knowmeter.store._graderecord import AssertionResult, DimensionOutcome, Grade, JudgeOutcome, Layers, OutputCut
from knowmeter.store._taskjson import DimensionJSON, ExecJSON, OutputCutJSON, TraceJSON
from knowmeter.store._taskrecord import AnalysisRecord, TraceRecord
from tests.support.records import task_record

PAIRS = [
    (TaskJSON, TaskRecord),
    (ExecJSON, ExecRecord),
    (TraceJSON, TraceRecord),
    (AnalysisJSON, AnalysisRecord),
    (GradeJSON, Grade),
    (LayersJSON, Layers),
    (AssertionJSON, AssertionResult),
    (JudgeJSON, JudgeOutcome),
    (DimensionJSON, DimensionOutcome),
    (OutputCutJSON, OutputCut),
]


@pytest.mark.parametrize(("view", "model"), PAIRS, ids=[m.__name__ for _, m in PAIRS])
def test_each_stored_json_view_has_the_fields_of_its_model(view: type, model: type[BaseModel]) -> None:
    assert set(view.__annotations__) == set(model.model_fields), f"{view.__name__} and {model.__name__} differ"


def test_a_stored_record_has_only_keys_its_view_knows() -> None:
    stored = task_record().stored()
    assert set(stored) <= set(TaskJSON.__annotations__)
    assert set(stored["exec"]) <= set(ExecJSON.__annotations__)
