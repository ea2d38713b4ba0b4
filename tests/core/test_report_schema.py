"""The shipped JSON Schema matches the report models, and real reports validate against it."""

from __future__ import annotations

import json

import jsonschema

from knowmeter.report._schema import SCHEMA_FILE, json_schema


def test_shipped_schema_is_current() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == json_schema(), "run: python -m knowmeter.report._schema"


def test_demo_report_validates(demo_report: dict) -> None:  # type: ignore[type-arg]
    jsonschema.validate(demo_report, json.loads(SCHEMA_FILE.read_text()))


def test_schema_rejects_a_report_without_watermark(demo_report: dict) -> None:  # type: ignore[type-arg]
    bad = json.loads(json.dumps(demo_report))
    del bad["run"]["watermark"]
    try:
        jsonschema.validate(bad, json.loads(SCHEMA_FILE.read_text()))
    except jsonschema.ValidationError as exc:
        assert "watermark" in exc.message
    else:
        raise AssertionError("a report without its watermark must not validate")

