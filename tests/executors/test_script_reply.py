"""A script agent's reply with impossible or wrongly typed fields: each is unknown and named in a
warning (a ⚠ line per variant), never a Python exception turned into a "crash"."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from knowmeter import jsonio
from knowmeter.executors._script import parse_script_stdout
from knowmeter.traces import ToolResultEvent
from tests.support.cli import init_demo, km


def _warnings(stdout: str) -> dict[str, str]:
    result = parse_script_stdout(stdout)
    return {w["kind"]: w["message"] for w in result.trace.meta.get("warnings", [])}


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("inputTokens", "NaN", "NaN"),
        ("outputTokens", "-5", "-5"),
        ("numTurns", "1e400", "Infinity"),
        ("durationApiMs", '"12"', '"12"'),
        ("inputTokens", "true", "true"),
    ],
)
def test_an_impossible_count_is_unknown_and_named(field: str, value: str, shown: str) -> None:
    stdout = f'{{"output": "30 days", "costUSD": 0.01, "{field}": {value}}}'
    result = parse_script_stdout(stdout)
    counts = {
        "inputTokens": result.usage["input_tokens"],
        "outputTokens": result.usage["output_tokens"],
        "numTurns": result.num_turns,
        "durationApiMs": result.duration_api_ms,
    }
    assert counts[field] is None and result.output == "30 days" and result.cost_usd == 0.01
    assert _warnings(stdout) == {
        f"reply_{field}": f"the agent's reply has {field} {shown}: it must be a finite number >= 0, so it is unknown"
    }


def test_good_counts_and_a_missing_one_raise_no_warning() -> None:
    result = parse_script_stdout('{"output": "x", "inputTokens": 10, "outputTokens": 2.0, "numTurns": 0}')
    assert result.usage["input_tokens"] == 10 and result.usage["output_tokens"] == 2 and result.num_turns == 0
    assert result.duration_api_ms is None and result.cost_usd is None and "warnings" not in result.trace.meta


def test_a_tool_exit_code_that_is_not_a_finite_number_is_unknown() -> None:
    call = {"tool": "Bash", "input": {"command": "ls"}, "output": "x"}
    reply = {"output": "ok", "toolCalls": [{**call, "exitCode": 1e400}, {**call, "exit_code": 2}]}
    events = parse_script_stdout(json.dumps(reply)).trace.events
    assert [e.exit_code for e in events if isinstance(e, ToolResultEvent)] == [None, 2]


def test_a_string_cost_and_a_null_output_are_named() -> None:
    assert parse_script_stdout('{"output": "x", "costUSD": "0.01"}').cost_usd is None
    assert _warnings('{"output": "x", "costUSD": "0.01"}') == {
        "reply_costUSD": 'the agent\'s reply has costUSD "0.01": a cost must be a number, so it is unknown'
    }
    assert parse_script_stdout('{"output": null}').output == ""
    assert set(_warnings('{"output": null}')) == {"reply_output"}
    assert _warnings('{"output": null, "ok": false}') == {}  # an error has no output to speak of
    assert _warnings('{"error": "quota"}') == {}


def test_a_lone_surrogate_escape_is_read_as_the_replacement_character() -> None:
    assert jsonio.loads('{"output": "lone \\ud800 x", "k\\udfff": ["\\ud83d\\ude00"]}') == {
        "output": "lone \ufffd x",
        "k\ufffd": ["\U0001f600"],  # a pair is one character, as before
    }
    assert parse_script_stdout('{"output": "lone \\ud800"}').output == "lone \ufffd"


RAW = "import sys\nsys.stdin.read()\nprint(open(sys.argv[1]).read())\n"


@pytest.mark.slow
def test_bad_replies_run_every_task_and_are_shown_as_warnings(tmp_path: Path) -> None:
    init_demo(tmp_path / "p")
    (tmp_path / "agent.py").write_text(RAW)
    replies = {
        "nan": '{"output": "30 days", "inputTokens": NaN, "outputTokens": 3, "costUSD": 0.01}',
        "surrogate": '{"output": "lone \\ud800 30 days", "costUSD": 0.01}',
    }
    for name, reply in replies.items():
        (tmp_path / f"{name}.json").write_text(reply)
        command = f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / f'{name}.json'}"
        r = km("eval", "--no-cache", "--json", "--bootstrap-samples", "200", "--executor", command, cwd=tmp_path / "p")
        report = json.loads(r.stdout)
        for variant in report["variants"]:
            assert variant["errors"] == 0, (name, variant["error_examples"])
        if name == "nan":
            assert report["variants"][0]["tokens"] == {"input": 0, "output": 0, "tasks_with_unknown_usage": 23}
            assert report["variants"][0]["exec_warnings"]["reply_inputTokens"]["count"] == 23
