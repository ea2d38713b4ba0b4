"""Reading a stored report.json back into a ``Report``: its ``schema_version`` is checked
first (an older or newer file gets one line saying what to do), then its shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowmeter.config import first_error
from knowmeter.errors import InputError
from knowmeter.report._model import REPORT_SCHEMA_VERSION, Report
from knowmeter.store import check_schema_version, read_json


def read_report(path: Path, run_id: str) -> Report:
    """The report at ``path`` (of run ``run_id``); ``InputError`` for a missing, damaged, older or
    newer one, naming the fix."""
    rebuild = f"knowmeter report {run_id}"
    data: Any = read_json(path)
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: not a report (expected a JSON object); the file was edited or damaged: rebuild it with {rebuild}"
        )
    check_schema_version(
        data, REPORT_SCHEMA_VERSION, str(path), older=f"rebuild it from the run's results with {rebuild}"
    )
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            f"{path}: {first_error(exc)}; the file was edited or damaged: rebuild it with {rebuild}"
        ) from None
