"""Trace and run assertions (behavior layer)."""

from __future__ import annotations

import pytest

from knowmeter.errors import InputError
from knowmeter.traces import ToolStatus
from tests.grading.grading_helpers import ToolCall, check, load, make_result, run, sample

OK, FAIL = ToolStatus.SUCCESS, ToolStatus.FAILURE
TOOLS: list[ToolCall] = [
    ("Bash", {"command": "grep -rn 'SELECT \"id\"' src/"}, "src/db.py:3: query", OK),
    ("Read", {"file_path": "/repo/说明.md"}, "自动驾驶 L2", OK),
    ("Read", {"file_path": "/repo/missing.md"}, "File does not exist.", FAIL),
    ("mcp__github__get_issue", {"number": 7}, "issue body", OK),
]
SOURCES = ["exec_command", None, None, None]  # the agent's own name for the first call


def traced(raw: dict[str, object]) -> bool | None:
    return check(raw, "answer", tools=TOOLS, source_names=SOURCES)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"type": "tools_called", "values": ["Bash", "Read"]}, True),
        ({"type": "tools_called", "values": ["bash"]}, True),  # names are case-insensitive
        ({"type": "tools_called", "values": ["exec_command"]}, True),  # the source name matches too
        ({"type": "tools_called", "value": "mcp__github__*"}, True),  # wildcards
        ({"type": "tools_called", "values": ["Read", "WebSearch"]}, False),
        ({"type": "tools_not_called", "values": ["WebSearch", "Write"]}, True),
        ({"type": "tools_not_called", "values": ["WebSearch", "Read"]}, False),
        ({"type": "tools_count_min", "value": 4}, True),
        ({"type": "tools_count_min", "value": 5}, False),
        ({"type": "tools_count_max", "value": 4}, True),
        ({"type": "tools_count_max", "value": 3}, False),
        ({"type": "tools_count_max", "value": 2, "tool": "Read"}, True),
        ({"type": "tools_count_min", "value": 3, "tool": "Read"}, False),
        ({"type": "tool_input_contains", "value": "Bash:grep -rn"}, True),  # omk's "Tool:text" form
        ({"type": "tool_input_contains", "value": 'Bash:SELECT "id"'}, True),  # string values, unescaped
        ({"type": "tool_input_contains", "value": "Read:说明.md"}, True),  # non-ASCII input
        ({"type": "tool_input_contains", "value": "Read:grep"}, False),  # right text, wrong tool
        ({"type": "tool_input_contains", "tool": "read", "value": "MISSING", "ignore_case": True}, True),
        ({"type": "tool_input_contains", "tool": "read", "value": "MISSING"}, False),
        ({"type": "tool_input_contains", "value": "mcp__github__get_issue:7"}, True),  # JSON text of input
        ({"type": "tool_input_not_contains", "value": "Bash:rm -rf"}, True),
        ({"type": "tool_input_not_contains", "value": "Bash:grep"}, False),
        ({"type": "tool_output_contains", "value": "Read:自动驾驶"}, True),
        ({"type": "tool_output_contains", "value": "Bash:自动驾驶"}, False),
        ({"type": "turns_min", "value": 5}, True),
        ({"type": "turns_max", "value": 4}, False),
    ],
)
def test_trace_assertion(raw: dict[str, object], expected: bool) -> None:
    assert traced(raw) is expected
    assert traced({**raw, "not": True}) is (not expected)


def test_no_tool_calls() -> None:
    assert check({"type": "tools_called", "values": ["Read"]}, "x") is False
    assert check({"type": "tools_not_called", "values": ["Read"]}, "x") is True
    assert check({"type": "tools_count_max", "value": 0}, "x") is True


def test_turns_prefer_the_executors_count_and_fail_when_unknown() -> None:
    assert check({"type": "turns_max", "value": 2}, "x", tools=TOOLS, turns=2) is True
    from knowmeter.executors._protocol import ExecResult
    from knowmeter.traces import Trace

    g = run(sample(), ExecResult(output="x", trace=Trace()), load([{"type": "turns_max", "value": 99}]))
    assert g.assertions[0].passed is False
    assert g.assertions[0].message.startswith("turns unknown")


def test_cost_max() -> None:
    assert check({"type": "cost_max", "value": 0.05}, "x", cost=0.04) is True
    assert check({"type": "cost_max", "value": 0.05}, "x", cost=0.06) is False
    assert check({"type": "cost_max", "value": 0.05}, "x", cost=0.0) is True


def test_unknown_cost_fails_with_the_reason_never_passes() -> None:
    g = run(sample(), make_result("x", cost=None), load([{"type": "cost_max", "value": 100}]))
    a = g.assertions[0]
    assert a.passed is False
    assert "cost unknown" in a.message
    assert a.layer == "behavior"


def test_latency_max() -> None:
    assert check({"type": "latency_max", "value": 1000}, "x", latency=999.0) is True
    assert check({"type": "latency_max", "value": 1000}, "x", latency=1001.0) is False
    g = run(sample(), make_result("x"), load([{"type": "latency_max", "value": 1000}]))
    assert g.assertions[0].passed is False
    assert "latency unknown" in g.assertions[0].message


def test_tool_text_needs_a_tool() -> None:
    with pytest.raises(InputError, match="Tool:text"):
        load([{"type": "tool_input_contains", "value": "grep"}])
    with pytest.raises(InputError, match="Tool:text"):
        load([{"type": "tool_output_contains", "value": ":grep"}])


def test_trace_assertions_score_the_behavior_layer() -> None:
    g = run(
        sample(),
        make_result("x", tools=TOOLS, cost=0.01),
        load(
            [
                {"type": "tools_called", "values": ["Read"], "weight": 3},
                {"type": "tools_not_called", "values": ["Read"]},
                {"type": "contains", "value": "x"},
            ]
        ),
    )
    assert [a.layer for a in g.assertions] == ["behavior", "behavior", "fact"]
    assert g.layers.behavior == pytest.approx(1 + 4 * 3 / 4)
    assert g.layers.fact == 5.0
