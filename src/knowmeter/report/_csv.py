"""Per-sample results as CSV (``--csv FILE``): one row per sample × variant × repeat, for a
spreadsheet or pandas. An unknown value (no score, no reported cost; the assertion counts and gap
signals of a task that failed to run) is an empty cell, never 0.
Text from the agent and the samples is untrusted: a cell that a spreadsheet would read as a
formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is prefixed with
``'``."""

from __future__ import annotations

import csv
import io
from typing import Any

from knowmeter import defaults
from knowmeter.report._model import Report
from knowmeter.report._view import ReportView, TaskView

COLUMNS = (
    "sample_id",
    "variant",
    "role",
    "repeat",
    "error",
    "composite",
    *defaults.LAYERS,
    "assertions_passed",
    "assertions_failed",
    "all_assertions_passed",
    "gap_signals",
    "agent_cost_usd",
    "latency_ms",
    "cached",
    "output",
)

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str | None) -> str:
    if value is None:
        return ""
    return "'" + value if value.startswith(_FORMULA_START) else value


def _number(value: Any) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


def _row(task: TaskView, role: str) -> list[str]:
    decided = [a.get("passed") for a in task.assertions if a.get("passed") is not None]
    graded = task.error is None  # a task that failed to run was not graded: its counts are unknown
    return [
        _text(task.sample_id),
        _text(task.variant),
        role,
        str(task.repeat),
        _text(task.error),
        _number(task.composite),
        *(_number(task.layers.get(layer)) for layer in defaults.LAYERS),
        str(sum(1 for p in decided if p)) if graded else "",
        str(sum(1 for p in decided if not p)) if graded else "",
        "" if task.passed is None else str(task.passed).lower(),
        str(len(task.gap_signals)) if task.gaps_analysed else "",
        _number(task.cost_usd),
        _number(task.latency_ms),
        str(task.cached).lower(),
        _text(task.output),
    ]


def results_csv(report: Report) -> str:
    """The report's tasks as CSV text (a header row, then one row per task in report order)."""
    view = ReportView(report)
    roles = {v.name: v.role for v in view.variants}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for task in view.tasks():
        writer.writerow(_row(task, roles.get(task.variant, "")))
    return out.getvalue()
