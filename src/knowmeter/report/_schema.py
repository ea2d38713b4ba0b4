"""``report.schema.json``: the JSON Schema of report.json, generated from ``Report`` (regenerate
with ``python -m knowmeter.report._schema``; a test keeps the shipped file in step). It
describes the file as written (``Report.to_dict()``), derived fields included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowmeter.report._model import Report

SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


def json_schema() -> dict[str, Any]:
    """The complete JSON Schema of report.json (draft 2020-12)."""
    schema = Report.model_json_schema(mode="serialization")
    # a derived section (``exit_code``) is left out, as the others, when what it is read from is absent
    schema["required"] = [name for name in schema["required"] if name not in Report.OPTIONAL_SECTIONS]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


if __name__ == "__main__":  # regenerate the shipped schema
    SCHEMA_FILE.write_text(json.dumps(json_schema(), indent=2) + "\n", encoding="utf-8")
