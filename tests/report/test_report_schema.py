"""The shipped JSON Schema is the one generated from the ``Report`` model, real reports validate
against it and read back into the model unchanged, and wrong shapes are refused by both."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from knowmeter.report import Report
from knowmeter.report._schema import SCHEMA_FILE, json_schema

SHIPPED = json.loads(SCHEMA_FILE.read_text())


def test_shipped_schema_is_current() -> None:
    assert json_schema() == SHIPPED, "run: python -m knowmeter.report._schema"


def test_the_schema_covers_every_section() -> None:
    assert SHIPPED["additionalProperties"] is False
    for section in (
        "run",
        "variants",
        "statistics",
        "comparisons",
        "verdict",
        "audit",
        "gaps",
        "coverage",
        "comprehension",
        "gates",
        "notes",
        "decision",
        "exit_code",
        "tasks",
    ):
        assert section in SHIPPED["properties"], section


@pytest.mark.slow
def test_demo_report_validates_and_reads_back_unchanged(demo_report: dict[str, Any]) -> None:
    jsonschema.validate(demo_report, SHIPPED)
    report = Report.model_validate(demo_report)
    assert report.verdict is not None and report.decision is not None and report.gaps is not None
    assert report.to_dict() == demo_report


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(report: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = report
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is _DELETE:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return edit


_DELETE = object()

WRONG = {
    "verdict banana": _set("verdict", "banana"),
    "verdict level banana": _set("verdict.level", "banana"),
    "unknown top-level section": _set("verdicts", {"level": "PROGRESS"}),
    "decision outcome unknown": _set("decision.outcome", "MAYBE"),
    "decision without exit code": _set("decision.exit_code", _DELETE),
    "gap rate as text": _set("gaps.variants.0.gap_rate", "high"),
    "gap signal of an unknown source": _set("gaps.variants.0.signals_by_source", {"telepathy": 1}),
    "coverage row without its files": _set("coverage.variants.0.files", _DELETE),
    "run without watermark": _set("run.watermark", _DELETE),
    "negative watermark count": _set("run.watermark.count", -1),
    "ci method unknown": _set("statistics.config.ci_method", "vibes"),
    "comparison metric without its interval": _set("comparisons.0.metrics.composite.diff", _DELETE),
    "audit status unknown": _set("audit.saturated.status", "fine"),
    "variant role unknown": _set("variants.0.role", "referee"),
    "gate of an unknown kind": _set(
        "gates.results",
        [{"gate": "vibes", "variant": "a", "passed": True, "message": "", "value": None, "limit": None}],
    ),
    "task with a negative repeat": _set("tasks.0.repeat", -1),
}


@pytest.mark.parametrize("name", list(WRONG))
@pytest.mark.slow
def test_a_wrong_shape_is_refused_by_schema_and_model(demo_report: dict[str, Any], name: str) -> None:
    bad = copy.deepcopy(demo_report)
    WRONG[name](bad)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SHIPPED)
    with pytest.raises(ValidationError):
        Report.model_validate(bad)
