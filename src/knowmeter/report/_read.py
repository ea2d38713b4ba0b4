"""Reading a stored report.json back into a ``Report``: its ``schema_version`` is checked
first (an older or newer file gets one line saying what to do), then its shape; its tasks are
joined in from the results file it names (``tasks_file``), read when first used."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from knowmeter.config import first_error
from knowmeter.errors import InputError
from knowmeter.report._model import REPORT_SCHEMA_EMBEDDED_TASKS, REPORT_SCHEMA_VERSION, Report
from knowmeter.store import JoinedTasks, RunDir, check_schema_version, read_json


def read_report(path: Path, run_id: str) -> Report:
    """The report at ``path`` (of run ``run_id``); ``InputError`` for a missing, damaged, older or
    newer one, naming the fix."""
    rebuild = f"knowmeter report {run_id}"
    data, lenient = _load(path)
    where = _non_finite(data, "") if lenient else None
    if where is not None:
        raise InputError(
            f"{path}: {where} is NaN or infinite, which is not a JSON number; the file was edited or damaged: "
            f"rebuild it with {rebuild}"
        )
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: not a report (expected a JSON object); the file was edited or damaged: rebuild it with {rebuild}"
        )
    if data.get("schema_version") == REPORT_SCHEMA_EMBEDDED_TASKS and type(data["schema_version"]) is int:
        data = {**data, "schema_version": REPORT_SCHEMA_VERSION}  # its tasks are embedded: read as they are
    check_schema_version(
        data, REPORT_SCHEMA_VERSION, str(path), older=f"rebuild it from the run's results with {rebuild}"
    )
    try:
        report = Report.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            f"{path}: {first_error(exc)}; the file was edited or damaged: rebuild it with {rebuild}"
        ) from None
    except RecursionError:  # a value nested thousands deep where the schema has none
        raise InputError(
            f"{path}: a value is nested too deeply for a report; the file was edited or damaged: "
            f"rebuild it with {rebuild}"
        ) from None
    if report.tasks is None and report.tasks_file is not None:
        report.tasks = JoinedTasks(path.parent / report.tasks_file, RunDir(path.parent).read_run)
    return report


def _load(path: Path) -> tuple[Any, bool]:
    """(the parsed file, whether it was read leniently). A file knowmeter wrote is strict JSON,
    which orjson reads; anything else goes through ``read_json``: its one-line error, or a lenient
    read that may hold NaN or infinite numbers."""
    try:
        return orjson.loads(path.read_bytes()), False
    except (OSError, orjson.JSONDecodeError):
        return read_json(path), True


def _non_finite(value: Any, at: str) -> str | None:
    """Where in ``value`` the first NaN or infinite number is (``variants[0].layer_means.composite``),
    or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else at or "the top level"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        where = _non_finite(item, f"{at}[{key}]" if isinstance(key, int) else f"{at}.{key}" if at else str(key))
        if where is not None:
            return where
    return None


def joined_report(run_dir: Path) -> dict[str, Any]:
    """The JSON form of a stored run's report.json with its tasks joined in from the results file
    it names, in report order (what ``knowmeter report RUN --json`` prints, without deciding
    again); ``InputError`` as for ``read_report``."""
    return read_report(run_dir / "report.json", run_dir.name).to_dict()
