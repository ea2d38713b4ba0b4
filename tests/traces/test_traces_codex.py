"""Codex ``exec --json`` streams, session rollouts (every output wrapper) and their merge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowmeter.traces import (
    ErrorKind,
    ToolResultEvent,
    ToolStatus,
    iter_codex_sessions,
    merge_codex,
    parse_codex_exec,
    parse_codex_rollout,
)
from tests.traces.traces_helpers import jsonl


def _exec(captures: Path, name: str) -> list[str]:
    return (captures / name / "stdout.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def _rollout(captures: Path, name: str) -> list[str]:
    [path] = (captures / name / "session").glob("rollout-*.jsonl")
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _outcomes(invocations: list[Any]) -> list[tuple[str, ToolStatus, ErrorKind | None, int | None, int]]:
    return [
        (
            i.call.input["command"],
            i.status,
            i.result.error_kind if i.result else None,
            i.result.exit_code if i.result else None,
            i.call.turn,
        )
        for i in invocations
    ]


READONLY = [
    ("grep -rn banana .", ToolStatus.SUCCESS, None, 0, 1),
    ("grep -rn kiwi .", ToolStatus.FAILURE, ErrorKind.EMPTY_SEARCH, 1, 2),
    ("cat missing.txt", ToolStatus.FAILURE, ErrorKind.NOT_FOUND, 1, 3),
    ("echo oops >&2; exit 3", ToolStatus.FAILURE, ErrorKind.NONZERO_EXIT, 3, 4),
]
BLOCKED = ("echo hi > created.txt && cat created.txt", ToolStatus.FAILURE, ErrorKind.PERMISSION_DENIED, 1, 5)


def test_exec_failures_readonly(captures: Path) -> None:
    trace, summary = parse_codex_exec(_exec(captures, "codex_failures_readonly"))
    assert _outcomes(trace.invocations()) == READONLY
    assert {c.source_tool for c in trace.tool_calls()} == {"command_execution"}
    assert summary.output.startswith("banana is in ./fruits.txt line 2")
    assert summary.usage == {
        "input_tokens": 600,
        "output_tokens": 60,
        "cache_read_tokens": 0,
        "cache_creation_tokens": 0,
    }
    assert summary.cost_usd is None and summary.error is None
    assert summary.session_id == "01a202a0-b9dd-7303-9e9e-d61eadddb9df"
    assert summary.num_turns == 5 and [m.turn for m in trace.messages("assistant")] == [5]


def test_rollout_has_the_sandbox_blocked_command(captures: Path) -> None:
    trace = parse_codex_rollout(_rollout(captures, "codex_failures_readonly"))
    assert _outcomes(trace.invocations()) == [*READONLY, BLOCKED]
    blocked = trace.invocations()[-1].result
    assert blocked is not None and blocked.output == "/bin/bash: line 1: created.txt: Read-only file system\n"
    assert trace.meta["usage"]["input_tokens"] == 600  # the last cumulative token_count, not a sum of six
    assert trace.meta["num_turns"] == 6 and trace.meta["agent_version"] == "0.169.0"
    assert trace.meta["model"] == "gpt-5.5"
    # the visible answer is in event_msg and response_item: counted once
    assert len(list(trace.messages("assistant"))) == 1
    users = [(m.text[:21], m.injected) for m in trace.messages("user", include_injected=True)]
    assert users == [("<environment_context>", True), ("find the word banana ", False)]
    [dev] = trace.messages("system", include_injected=True)
    assert dev.text.startswith("<skills_instructions>") and dev.injected


def test_merge_recovers_the_blocked_command(captures: Path) -> None:
    exec_trace, _ = parse_codex_exec(_exec(captures, "codex_failures_readonly"))
    rollout = parse_codex_rollout(_rollout(captures, "codex_failures_readonly"))
    before = [e.to_dict() for e in exec_trace.events]
    merged = merge_codex(exec_trace, rollout)
    assert _outcomes(merged.invocations()) == [*READONLY, BLOCKED]
    assert merged.meta["recovered_calls"] == 1 and merged.meta["num_turns"] == 6
    assert [m.turn for m in merged.messages("assistant")] == [6]
    assert [e.kind for e in merged.events][-3:] == ["tool_call", "tool_result", "message"]
    assert [e.to_dict() for e in exec_trace.events] == before  # inputs untouched


def test_merge_adds_nothing_when_the_stream_is_complete(captures: Path) -> None:
    exec_trace, _ = parse_codex_exec(_exec(captures, "codex_failures_workspace_write"))
    rollout = parse_codex_rollout(_rollout(captures, "codex_failures_workspace_write"))
    merged = merge_codex(exec_trace, rollout)
    assert merged.meta["recovered_calls"] == 0
    assert [e.to_dict() for e in merged.events] == [e.to_dict() for e in exec_trace.events]
    assert len(merged.tool_calls()) == 5


def test_exec_api_error(captures: Path) -> None:
    trace, summary = parse_codex_exec(_exec(captures, "codex_api_error_400"))
    assert summary.error == "API error: scripted invalid request"
    [msg] = trace.messages("system", include_injected=True)  # error + turn.failed: reported once
    assert msg.injected and summary.output == "" and trace.tool_calls() == []
    rollout = parse_codex_rollout(_rollout(captures, "codex_api_error_400"))
    assert rollout.meta["error"] == "API error: scripted invalid request"


def test_exec_other_items_parallel_calls_and_truncation() -> None:
    lines = jsonl(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "thinking"}},
        {
            "type": "item.started",
            "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc 'ls'", "status": "in_progress"},
        },
        {
            "type": "item.started",
            "item": {
                "id": "item_2",
                "type": "command_execution",
                "command": "bash -lc 'rg foo'",
                "status": "in_progress",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_1",
                "type": "command_execution",
                "command": "bash -lc 'ls'",
                "aggregated_output": "a\n",
                "exit_code": 0,
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_2",
                "type": "command_execution",
                "command": "bash -lc 'rg foo'",
                "aggregated_output": "bash: line 1: rg: command not found\n",
                "exit_code": 127,
                "status": "failed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_3",
                "type": "file_change",
                "status": "completed",
                "changes": [{"path": "/w/a.py", "kind": "add"}],
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_4",
                "type": "command_execution",
                "command": "bash -lc 'rm -rf x'",
                "aggregated_output": "exec command "
                "rejected: dangerous command detected; rejected by user approval "
                "settings",
                "exit_code": -1,
                "status": "failed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "item_5",
                "type": "mcp_tool_call",
                "server": "docs",
                "tool": "find",
                "arguments": {"q": "x"},
                "error": {"message": "boom"},
                "status": "failed",
            },
        },
        {"type": "item.completed", "item": {"id": "item_6", "type": "web_search", "query": "codex docs"}},
        {"type": "item.completed", "item": {"type": "error", "message": "Model metadata for `m` not found."}},
        {"type": "item.completed", "item": {"id": "item_7", "type": "agent_message", "text": "done"}},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 2}},
        {"type": "some.future.event"},
    )
    lines.append('{"type":"turn.completed","usage":{"input_tok')
    trace, summary = parse_codex_exec(lines)
    got = [(i.call.tool, i.call.turn, i.status, i.result and i.result.error_kind) for i in trace.invocations()]
    assert got == [
        ("Bash", 1, ToolStatus.SUCCESS, None),
        ("Bash", 1, ToolStatus.FAILURE, ErrorKind.COMMAND_MISSING),  # started before any result: same turn
        ("Edit", 2, ToolStatus.SUCCESS, None),
        ("Bash", 3, ToolStatus.FAILURE, ErrorKind.PERMISSION_DENIED),
        ("mcp__docs__find", 4, ToolStatus.FAILURE, ErrorKind.OTHER),
        ("WebSearch", 5, ToolStatus.SUCCESS, None),
    ]
    assert summary.output == "done" and summary.usage["cache_read_tokens"] == 4
    assert trace.meta["truncated_last_line"] is True and trace.meta["skipped_records"] == {"some.future.event": 1}
    assert [m.text[:14] for m in trace.messages("system", include_injected=True)] == ["Model metadata"]


def _item(ptype: str, **payload: Any) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": {"type": ptype, **payload}}


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return _item("function_call", name=name, arguments=json.dumps(args), call_id=call_id)


def _out(call_id: str, output: Any) -> dict[str, Any]:
    return _item("function_call_output", call_id=call_id, output=output)


def test_rollout_output_wrappers_of_every_version() -> None:
    lines = jsonl(
        {
            "timestamp": "t",
            "type": "session_meta",
            "payload": {"id": "sess", "cwd": "/w", "cli_version": "0.77.0", "originator": "codex_cli_rs"},
        },
        _item(
            "message",
            role="user",
            content=[
                {"type": "input_text", "text": "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>use rg</INSTRUCTIONS>"}
            ],
        ),
        _item("message", role="user", content=[{"type": "input_text", "text": "where is foo?"}]),
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "user_message", "message": "where is foo?"}},
        # 1. older: JSON with metadata.exit_code, shell argv
        _call("c1", "shell", {"command": ["bash", "-lc", "rg foo"], "workdir": "/w"}),
        _out("c1", json.dumps({"output": "", "metadata": {"exit_code": 1, "duration_seconds": 0.1}})),
        # 2. shell_command era: "Exit code: N"
        _call("c2", "shell_command", {"command": "cat nope.txt"}),
        _out("c2", "Exit code: 1\nWall time: 0.3 seconds\nOutput:\ncat: nope.txt: No such file or directory\n"),
        # 3. unified exec, still running
        _call("c3", "exec_command", {"cmd": "npm run dev", "yield_time_ms": 1000}),
        _out("c3", "Chunk ID: 1\nWall time: 1.0 seconds\nProcess running with session ID 7\nOutput:\nready\n"),
        _call("c3b", "write_stdin", {"session_id": 7, "chars": ""}),
        _out("c3b", "Chunk ID: 2\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n"),
        # JS cell wrapper (newer Codex): the command is inside the script
        _item(
            "custom_tool_call",
            name="exec",
            call_id="c4",
            input='const result = await tools.exec_command({cmd: "git status --short"}); text(result);',
        ),
        _item(
            "custom_tool_call_output",
            call_id="c4",
            output="Script completed\nChunk ID: 3\nWall time: 0.1 "
            "seconds\nProcess exited with code 128\nOutput:\nfatal: not a git repository\n",
        ),
        # 4. a content list
        _call("c5", "view_image", {"path": "a.png"}),
        _out("c5", [{"type": "input_text", "text": "image shown"}]),
        # 5. apply_patch
        _item("custom_tool_call", name="apply_patch", call_id="c6", input="*** Begin Patch\n*** End Patch"),
        _item("custom_tool_call_output", call_id="c6", output="apply_patch verification failed: no context"),
        _item("local_shell_call", call_id="c7", action={"type": "exec", "command": ["ls", "-la"]}),
        _item(
            "local_shell_call_output", call_id="c7", output=json.dumps({"output": "x\n", "metadata": {"exit_code": 0}})
        ),
        _item("web_search_call", id="ws1", action={"type": "search", "query": "codex rollout"}),
        _call("c8", "docs__search", {"q": "x"}),
        _out("c8", {"content": "no", "success": False}),
        _item("reasoning", summary=[{"type": "summary_text", "text": "hmm"}], encrypted_content="zzz"),
        _item("message", role="assistant", content=[{"type": "output_text", "text": "foo is in a.py"}]),
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "agent_message", "message": "foo is in a.py"}},
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "token_count", "info": None}},
        {
            "timestamp": "t",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"total_token_usage": {"input_tokens": 50, "cached_input_tokens": 20, "output_tokens": 5}},
            },
        },
        {
            "timestamp": "t",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"total_token_usage": {"input_tokens": 90, "cached_input_tokens": 30, "output_tokens": 9}},
            },
        },
        {"timestamp": "t", "type": "compacted", "payload": {"message": "summary of earlier turns"}},
        {"timestamp": "t", "type": "world_state", "payload": {"full": True}},
    )
    trace = parse_codex_rollout(lines)
    got = [
        (
            i.call.tool,
            i.call.input.get("command") or i.call.source_tool,
            i.status,
            i.result and i.result.error_kind,
            i.result and i.result.exit_code,
        )
        for i in trace.invocations()
    ]
    assert got == [
        ("Bash", "rg foo", ToolStatus.FAILURE, ErrorKind.EMPTY_SEARCH, 1),
        ("Bash", "cat nope.txt", ToolStatus.FAILURE, ErrorKind.NOT_FOUND, 1),
        ("Bash", "npm run dev", ToolStatus.UNKNOWN, None, None),
        ("write_stdin", "write_stdin", ToolStatus.SUCCESS, None, 0),
        ("Bash", "git status --short", ToolStatus.FAILURE, ErrorKind.NONZERO_EXIT, 128),
        ("view_image", "view_image", ToolStatus.SUCCESS, None, None),
        ("Edit", "apply_patch", ToolStatus.FAILURE, ErrorKind.TOOL_MISUSE, None),
        ("Bash", "ls -la", ToolStatus.SUCCESS, None, 0),
        ("WebSearch", "web_search_call", ToolStatus.SUCCESS, None, None),
        ("mcp__docs__search", "docs__search", ToolStatus.FAILURE, ErrorKind.OTHER, None),
    ]
    results = {e.id: e for e in trace.events if isinstance(e, ToolResultEvent)}
    assert results["c2"].output == "cat: nope.txt: No such file or directory\n"  # wrapper removed
    assert trace.tool_calls()[0].input == {"command": "rg foo", "workdir": "/w"}
    assert trace.tool_calls()[0].cwd == "/w"  # the directory the call ran in, for its relative paths
    assert [m.text for m in trace.messages("user")] == ["where is foo?"]
    assert [m.text for m in trace.messages("assistant")] == ["foo is in a.py"]
    assert trace.meta["usage"] == {
        "input_tokens": 60,
        "output_tokens": 9,
        "cache_read_tokens": 30,
        "cache_creation_tokens": None,
    }
    assert trace.meta["agent_version"] == "0.77.0" and trace.meta["session_id"] == "sess"
    assert any(
        m.text == "summary of earlier turns" and m.injected for m in trace.messages("system", include_injected=True)
    )


def test_merge_does_not_duplicate_renamed_or_polling_calls() -> None:
    exec_trace, _ = parse_codex_exec(
        jsonl(
            {"type": "thread.started", "thread_id": "t"},
            {
                "type": "item.completed",
                "item": {
                    "id": "item_0",
                    "type": "command_execution",
                    "command": "bash -lc 'ls'",
                    "aggregated_output": "",
                    "exit_code": 0,
                    "status": "completed",
                },
            },
            {
                "type": "item.completed",
                "item": {
                    "id": "item_1",
                    "type": "file_change",
                    "status": "completed",
                    "changes": [{"path": "a", "kind": "update"}],
                },
            },
            {"type": "item.completed", "item": {"id": "item_2", "type": "todo_list", "items": []}},
        )
    )
    rollout = parse_codex_rollout(
        jsonl(
            _call("c0", "exec_command", {"cmd": "ls"}),
            _out("c0", "Process exited with code 0\nOutput:\n"),
            _call("c0b", "write_stdin", {"session_id": 1}),
            _out("c0b", "Process exited with code 0\nOutput:\n"),
            _item("custom_tool_call", name="apply_patch", call_id="c1", input="*** Begin Patch"),
            _item("custom_tool_call_output", call_id="c1", output="Success. Updated the following files:\nM a"),
            _call("c2", "update_plan", {"plan": []}),
            _out("c2", "Plan updated"),
            _call("c3", "exec_command", {"cmd": "touch b"}),
            _out("c3", "Process exited with code 1\nOutput:\ntouch: cannot touch 'b': Read-only file system\n"),
        )
    )
    merged = merge_codex(exec_trace, rollout)
    assert [c.tool for c in merged.tool_calls()] == ["Bash", "Edit", "TodoWrite", "Bash"]
    assert merged.meta["recovered_calls"] == 1
    last = merged.invocations()[-1]
    assert last.call.input["command"] == "touch b" and last.result is not None
    assert last.result.error_kind is ErrorKind.PERMISSION_DENIED


def test_iter_codex_sessions(tmp_path: Path, captures: Path) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "11" / "22"
    day.mkdir(parents=True)
    for p in sorted(captures.glob("codex_*/session/rollout-*.jsonl")):
        (day / p.name).write_bytes(p.read_bytes())
    (day / "rollout-x.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    sessions = list(iter_codex_sessions(tmp_path / ".codex"))
    assert len(sessions) == 6
    assert all(s.session_id in s.path.name for s in sessions)
    assert sum(len(s.tool_calls()) for s in sessions) == 1 + 1 + 5 + 5 + 1 + 0
    assert {s.main.meta["agent_version"] for s in sessions} == {"0.169.0"}


@pytest.mark.parametrize("name", ["codex_shell_ok", "codex_dns_with_offline_args", "codex_dns_without_offline_args"])
def test_simple_runs_agree_between_stream_and_rollout(captures: Path, name: str) -> None:
    exec_trace, _ = parse_codex_exec(_exec(captures, name))
    rollout = parse_codex_rollout(_rollout(captures, name))
    assert _outcomes(exec_trace.invocations()) == _outcomes(rollout.invocations())
    assert exec_trace.assistant_text() == rollout.assistant_text()


def test_exec_item_ids_reused_by_a_later_turn_stay_distinct() -> None:
    turn: list[dict[str, Any]] = [
        {"type": "turn.started"},
        {"type": "item.started", "item": {"id": "item_0", "type": "command_execution", "command": "ls"}},
        {
            "type": "item.completed",
            "item": {
                "id": "item_0",
                "type": "command_execution",
                "command": "ls",
                "aggregated_output": "",
                "exit_code": 0,
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {"id": "item_1", "type": "file_change", "status": "completed", "changes": []},
        },
        {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}},
    ]
    trace, summary = parse_codex_exec(jsonl(*turn, *turn))
    assert [c.id for c in trace.tool_calls()] == ["item_0", "item_1", "item_0#1", "item_1#1"]
    assert all(i.result is not None for i in trace.invocations())
    assert summary.usage["input_tokens"] == 2
