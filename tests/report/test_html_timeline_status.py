"""The timeline's status of a tool result agrees with the gap analysis (issue 33, point 5): a
search that ran and found nothing is a failed search, not "success"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowmeter.report._view import TaskView
from knowmeter.report.html._payload import _timeline


def _task(result: dict[str, object]) -> TaskView:
    events: list[Mapping[str, Any]] = [
        {"kind": "tool_call", "id": "c1", "tool": "Grep", "input": {"pattern": "refund"}},
        {"kind": "tool_result", "id": "c1", **result},
    ]
    return TaskView("t", "s", "v", 1, "", None, None, None, False, None, None, [], [], None, events, [])


def test_an_empty_search_is_marked_failed() -> None:
    (step,) = _timeline(_task({"output": "", "status": "success", "error_kind": "empty_search"}))
    assert step["st"] == "failed: no results" and step["fail"] and step["fs"]


def test_a_plain_success_and_other_error_kinds() -> None:
    (ok,) = _timeline(_task({"output": "3 lines", "status": "success"}))
    assert ok["st"] == "success" and not ok["fail"]
    (denied,) = _timeline(_task({"output": "", "status": "failure", "error_kind": "permission_denied"}))
    assert denied["st"] == "failure · permission_denied" and denied["fail"]
