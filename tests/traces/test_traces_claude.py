"""Claude stream-json and on-disk session JSONL: summaries, dedup, turns, injected text, subagents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from knowmeter.traces import (
    ClaudeSessionReader,
    ErrorKind,
    MessageEvent,
    ToolCallEvent,
    ToolStatus,
    iter_claude_sessions,
    load_claude_session,
    load_trace,
    parse_claude_session,
    parse_claude_stream,
)
from tests.traces.traces_helpers import claude_raw, jsonl, records

SESSION_A758 = "claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
SUBAGENT = "claude-code-session-jsonl/4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl"


def _stream(captures: Path, name: str) -> list[str]:
    return (captures / name / "stdout.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


# --- stream-json ---------------------------------------------------------------------------------


def test_stream_failures_capture_summary_and_classification(captures: Path) -> None:
    trace, summary = parse_claude_stream(_stream(captures, "claude_failures"))
    assert summary.output.startswith("Found 'banana' in fruits.txt line 2; no kiwi")
    assert summary.usage == {
        "input_tokens": 500,
        "output_tokens": 50,
        "cache_read_tokens": 0,
        "cache_creation_tokens": 0,
    }
    assert summary.cost_usd == pytest.approx(0.00375)
    assert (summary.num_turns, summary.duration_api_ms, summary.duration_ms) == (5, 216.0, 532.0)
    assert summary.error is None and summary.api_error_status is None
    assert summary.session_id == "278e26a5-be1e-4152-ab6c-2222e364c483"
    outcomes = [
        (
            i.call.tool,
            i.call.input.get("pattern") or i.call.input.get("file_path") or i.call.input.get("command"),
            i.status,
            i.result.error_kind if i.result else None,
            i.result.exit_code if i.result else None,
            i.call.turn,
        )
        for i in trace.invocations()
    ]
    assert outcomes == [
        ("Grep", "banana", ToolStatus.SUCCESS, None, None, 1),
        ("Grep", "kiwi", ToolStatus.SUCCESS, ErrorKind.EMPTY_SEARCH, None, 2),
        ("Read", "/tmp/probe/definitely-missing.txt", ToolStatus.FAILURE, ErrorKind.NOT_FOUND, None, 3),
        ("Bash", "ls && echo oops >&2 && exit 3", ToolStatus.FAILURE, ErrorKind.NONZERO_EXIT, 3, 4),
    ]
    # text and the first tool call share one API message (two lines, one message.id): one turn
    assert [m.turn for m in trace.messages("assistant")] == [1, 5]
    assert trace.meta["agent_version"] == "2.1.197" and trace.meta["model"] == "claude-opus-4-8[1m]"


def test_stream_from_the_sdk_bundled_cli_has_the_same_outcomes(captures: Path) -> None:
    """claude 2.1.330 (PyPI wheel) writes the result line with keys in another order."""
    a, _ = parse_claude_stream(_stream(captures, "claude_failures"))
    b, summary = parse_claude_stream(_stream(captures, "claude_sdk_bundled_failures"))
    assert [(i.call.tool, i.status, i.result and i.result.error_kind) for i in a.invocations()] == [
        (i.call.tool, i.status, i.result and i.result.error_kind) for i in b.invocations()
    ]
    assert summary.cost_usd == pytest.approx(0.003) and summary.num_turns == 5


def test_stream_api_error_is_injected_and_reported(captures: Path) -> None:
    trace, summary = parse_claude_stream(_stream(captures, "claude_api_error_400"))
    assert summary.error == "API Error: 400 scripted invalid request"
    assert summary.api_error_status == 400
    assert summary.output == ""  # the synthetic message is not the agent's answer
    assert trace.assistant_text() == ""
    [msg] = trace.messages("assistant", include_injected=True)
    assert msg.injected and msg.text.startswith("API Error: 400")
    assert trace.turns == 0 and trace.meta["api_errors"] == 1


def test_stream_permission_denial(captures: Path) -> None:
    trace, summary = parse_claude_stream(_stream(captures, "claude_bash_denied"))
    [inv] = trace.invocations()
    assert inv.status is ToolStatus.FAILURE and inv.result is not None
    assert inv.result.error_kind is ErrorKind.PERMISSION_DENIED
    assert [d["tool_use_id"] for d in summary.permission_denials] == [inv.call.id]


def test_permission_denials_list_overrides_an_unrecognised_text() -> None:
    lines = jsonl(
        {
            "type": "assistant",
            "session_id": "s",
            "message": {
                "id": "m1",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "rm x"}}],
            },
        },
        {
            "type": "user",
            "session_id": "s",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "some new wording", "is_error": True}
                ]
            },
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": "s",
            "result": "done",
            "permission_denials": [{"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {}}],
        },
    )
    trace, _ = parse_claude_stream(lines)
    [inv] = trace.invocations()
    assert inv.result is not None and inv.result.error_kind is ErrorKind.PERMISSION_DENIED


def test_partial_messages_stream_gives_the_same_trace(captures: Path) -> None:
    plain, _ = parse_claude_stream(_stream(captures, "claude_grep_ok"))
    partial, summary = parse_claude_stream(_stream(captures, "claude_partial_messages"))
    assert [e.kind for e in partial.events] == [e.kind for e in plain.events]
    assert partial.meta["skipped_records"] == {"stream_event": 12, "system/status": 2}
    assert summary.output == "Found 'banana' in fruits.txt line 2."


def test_sdk_message_dicts_and_subagent_parent_tool_use_id() -> None:
    """The Agent SDK yields the same objects as dicts; lines with parent_tool_use_id are a subagent's."""
    msgs: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-x", "cwd": "/w"},
        {
            "type": "assistant",
            "session_id": "s",
            "parent_tool_use_id": None,
            "message": {
                "id": "m1",
                "usage": {"input_tokens": 10, "output_tokens": 1},
                "content": [{"type": "tool_use", "id": "task1", "name": "Task", "input": {"prompt": "look"}}],
            },
        },
        {
            "type": "assistant",
            "session_id": "s",
            "parent_tool_use_id": "task1",
            "message": {
                "id": "m2",
                "content": [{"type": "tool_use", "id": "g1", "name": "Glob", "input": {"pattern": "*"}}],
            },
        },
        {
            "type": "user",
            "session_id": "s",
            "parent_tool_use_id": "task1",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "g1",
                        "content": [{"type": "text", "text": "No files found"}],
                    }
                ]
            },
        },
        {
            "type": "user",
            "session_id": "s",
            "parent_tool_use_id": None,
            "message": {"content": [{"type": "tool_result", "tool_use_id": "task1", "content": None}]},
        },
        {
            "type": "assistant",
            "session_id": "s",
            "parent_tool_use_id": None,
            "message": {"id": "m3", "content": [{"type": "text", "text": "nothing there"}]},
        },
    ]
    trace, summary = parse_claude_stream(msgs)
    glob, task = trace.tool_calls()[1], trace.tool_calls()[0]
    assert (glob.agent_id, glob.turn, task.agent_id, task.turn) == ("task1", 2, None, 1)
    results = {i.call.id: i.result for i in trace.invocations()}
    assert results["g1"] is not None and results["g1"].error_kind is ErrorKind.EMPTY_SEARCH
    assert results["g1"].agent_id == "task1" and results["task1"] is not None and results["task1"].output == ""
    assert summary.error is not None and "without a result line" in summary.error
    assert summary.output == "nothing there" and summary.num_turns == 3
    assert summary.usage["input_tokens"] == 10


def test_stream_truncated_last_line_and_unknown_records_are_tolerated(captures: Path) -> None:
    lines = _stream(captures, "claude_failures")
    cut = [*lines[:-1], '{"type":"rate_limit_event","x":1}\n', "\n", lines[-1][:57]]
    trace, summary = parse_claude_stream(cut)
    assert len(trace.tool_calls()) == 4
    assert trace.meta["truncated_last_line"] is True and trace.meta["bad_lines"] == 1
    assert trace.meta["skipped_records"] == {"rate_limit_event": 1}
    assert summary.error is not None  # the result line was the one cut off
    assert summary.output.startswith("Found 'banana'")


def test_result_error_subtypes() -> None:
    lines = jsonl(
        {
            "type": "result",
            "subtype": "error_max_turns",
            "is_error": True,
            "session_id": "s",
            "num_turns": 3,
            "errors": ["max turns reached"],
            "total_cost_usd": 0.5,
        }
    )
    _, summary = parse_claude_stream(lines)
    assert summary.error == "max turns reached" and summary.cost_usd == 0.5 and summary.num_turns == 3


# --- session JSONL -------------------------------------------------------------------------------


def test_session_dedup_by_message_id_does_not_multiply_usage(ref_traces: Path) -> None:
    path = ref_traces / SESSION_A758
    raw = claude_raw(path)
    assistant_lines = [r for r in records(path) if r.get("type") == "assistant"]
    assert len(assistant_lines) == 44 and len(raw["message_ids"]) == 29  # several lines per message
    once = sum(u.get("output_tokens", 0) for u in raw["usage"].values())
    per_line = sum(r["message"]["usage"]["output_tokens"] for r in assistant_lines)
    trace = load_trace(path)
    assert trace.meta["usage"]["output_tokens"] == once == 5473
    assert per_line > once
    assert trace.meta["usage"]["cache_read_tokens"] == sum(
        u.get("cache_read_input_tokens", 0) for u in raw["usage"].values()
    )


def test_session_capture_matches_its_stream(captures: Path) -> None:
    """The session file the CLI wrote and its stdout give the same calls, outcomes and usage."""
    stream, summary = parse_claude_stream(_stream(captures, "claude_failures"))
    [session_file] = (captures / "claude_failures" / "session").glob("*.jsonl")
    session = load_trace(session_file)
    assert [(c.id, c.tool, c.turn) for c in session.tool_calls()] == [
        (c.id, c.tool, c.turn) for c in stream.tool_calls()
    ]
    assert [(i.status, i.result and i.result.error_kind) for i in session.invocations()] == [
        (i.status, i.result and i.result.error_kind) for i in stream.invocations()
    ]
    assert session.meta["usage"] == summary.usage  # the session's final per-message usage sums up
    assert [m.text for m in session.messages("user")] == ["find the word banana in this folder"]


def test_session_2_1_330_reads_cost_state_and_skips_request_dumps(captures: Path) -> None:
    [path] = (captures / "claude_sdk_bundled_failures" / "session").glob("*.jsonl")
    trace = load_trace(path)
    assert trace.meta["cost_usd"] == pytest.approx(0.003)
    assert trace.meta["agent_version"] == "2.1.330" and len(trace.tool_calls()) == 4
    # api-request blobs hold user-role messages; none of them may become an event
    assert [m.text for m in trace.messages("user", include_injected=True)] == ["find the word banana in this folder"]


def test_session_api_error_message_is_injected(captures: Path) -> None:
    [path] = (captures / "claude_api_error_400" / "session").glob("*.jsonl")
    trace = load_trace(path)
    [msg] = trace.messages("assistant", include_injected=True)
    assert msg.injected and trace.meta["api_errors"] == 1 and trace.turns == 0


def _session_lines() -> list[str]:
    base = {"sessionId": "sess-1", "cwd": "/w", "version": "2.1.76", "isSidechain": False}
    return jsonl(
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {
                "role": "user",
                "content": "<command-name>/review</command-name>\n<command-message>review</command-message>",
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u2",
            "isMeta": True,
            "message": {"role": "user", "content": [{"type": "text", "text": "Base directory for this skill: x"}]},
        },
        {
            **base,
            "type": "user",
            "uuid": "u3",
            "message": {
                "role": "user",
                "content": ("<system-reminder>\ncontext\n</system-reminder>\nplease fix the bug"),
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "id": "m1",
                "model": "claude-opus-4-6",
                "usage": {"input_tokens": 3, "output_tokens": 1},
                "content": [{"type": "thinking", "thinking": "", "signature": "x"}],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a2",
            "message": {
                "id": "m1",
                "model": "claude-opus-4-6",
                "usage": {"input_tokens": 3, "output_tokens": 1},
                "content": [{"type": "tool_use", "id": "t1", "name": "Grep", "input": {"pattern": "x"}}],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a3",
            "message": {
                "id": "m1",
                "model": "claude-opus-4-6",
                "usage": {"input_tokens": 3, "output_tokens": 40},
                "content": [{"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/x"}}],
            },
        },
        {
            "type": "progress",
            "uuid": "p1",
            "data": {
                "type": "agent_progress",
                "message": {
                    "type": "assistant",
                    "message": {"id": "mX", "content": [{"type": "tool_use", "id": "tX", "name": "Bash", "input": {}}]},
                },
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u5",
            "toolUseResult": "Error: File does not exist.",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "is_error": True,
                        "content": "<tool_use_error>File does not exist.</tool_use_error>",
                    }
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u4",
            "toolUseResult": {"mode": "content", "numFiles": 0, "content": "", "numLines": 0},
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "No matches found"}],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u4",
            "message": {
                "role": "user",
                "content": [  # resumed copy
                    {"type": "tool_result", "tool_use_id": "t1", "content": "No matches found"}
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u6",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "PostToolUse:Edit hook additional context: [COMPILE ERROR] x"}],
            },
        },
        {
            **base,
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "s1",
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto"},
        },
        {
            **base,
            "type": "user",
            "uuid": "u7",
            "isCompactSummary": True,
            "message": {"role": "user", "content": "This session is being continued from a previous conversation…"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a4",
            "isApiErrorMessage": True,
            "error": "rate_limit",
            "message": {
                "id": "e1",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "You've hit your limit · resets 6pm"}],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a5",
            "isSidechain": True,
            "agentId": "abc",
            "message": {"id": "m2", "model": "claude-opus-4-6", "content": [{"type": "text", "text": "sub says"}]},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a6",
            "timestamp": "2026-01-01T00:05:00Z",
            "message": {"id": "m3", "model": "claude-opus-4-6", "content": "Done: the bug is fixed."},
        },
        {"type": "summary", "summary": "Fix the bug", "leafUuid": "a6"},
        {"type": "weird-new-type", "x": 1},
    )


def test_session_injected_text_dedup_turns_and_usage() -> None:
    trace = parse_claude_session(_session_lines())
    users = [(m.text.split("\n")[0][:20], m.injected) for m in trace.messages("user", include_injected=True)]
    assert users == [
        ("<command-name>/revie", True),
        ("Base directory for t", True),
        ("<system-reminder>", True),
        ("please fix the bug", False),  # the human part of a line with a reminder
        ("PostToolUse:Edit hoo", True),
        ("This session is bein", True),
    ]
    assert [m.text for m in trace.messages("user")] == ["please fix the bug"]
    calls = trace.tool_calls()
    assert [(c.id, c.turn) for c in calls] == [("t1", 1), ("t2", 1)]  # tX inside progress is not a call
    inv = {i.call.id: i.result for i in trace.invocations()}
    assert inv["t1"] is not None and inv["t1"].error_kind is ErrorKind.EMPTY_SEARCH and inv["t1"].turn == 1
    assert inv["t2"] is not None and inv["t2"].error_kind is ErrorKind.NOT_FOUND
    assert sum(1 for e in trace.events if e.kind == "tool_result") == 2  # the resumed copy is dropped
    assert trace.meta["usage"] == {
        "input_tokens": 3 + 0,
        "output_tokens": 40,
        "cache_read_tokens": None,
        "cache_creation_tokens": None,
    }
    assistant = [
        (m.text[:15], m.injected, m.agent_id, m.turn) for m in trace.messages("assistant", include_injected=True)
    ]
    assert assistant == [
        ("You've hit your", True, None, 1),
        ("sub says", False, "abc", 2),
        ("Done: the bug i", False, None, 3),
    ]
    [system] = [m for m in trace.messages("system", include_injected=True)]
    assert system.text == "Conversation compacted" and system.injected
    assert trace.meta["title"] == "Fix the bug" and trace.meta["api_errors"] == 1
    assert (trace.meta["started_at"], trace.meta["ended_at"]) == ("2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z")
    assert trace.meta["session_id"] == "sess-1" and trace.meta["skipped_records"] == 2


def test_session_reader_streams_events_before_the_end() -> None:
    """``ClaudeSessionReader.events`` is lazy: the first event comes before later lines are read."""
    consumed = 0

    def lines() -> object:
        nonlocal consumed
        for line in _session_lines():
            consumed += 1
            yield line

    reader = ClaudeSessionReader()
    first = next(iter(reader.events(lines())))  # type: ignore[arg-type]
    assert isinstance(first, MessageEvent) and consumed == 1


def test_truncated_last_line_of_a_session(tmp_path: Path, ref_traces: Path) -> None:
    text = (ref_traces / SESSION_A758).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(lines[:-3]) + lines[-3][: len(lines[-3]) // 2], encoding="utf-8")
    trace = load_trace(path)
    assert trace.meta["truncated_last_line"] is True and trace.meta["bad_lines"] == 1
    assert trace.meta["lines"] == len(lines) - 2
    assert len(trace.tool_calls()) == 32


def _project_tree(root: Path, ref: Path, captures: Path) -> Path:
    """A ``~/.claude`` folder: two projects; the a758 session gets the spotter subagent file and a
    compaction transcript under ``<session>/subagents``."""
    project = root / "projects" / "-home-u-app"
    sub = project / "a758b6ba-8d47-447c-bead-7f25794b7319" / "subagents"
    sub.mkdir(parents=True)
    shutil.copy(ref / SESSION_A758, project / "a758b6ba-8d47-447c-bead-7f25794b7319.jsonl")
    shutil.copy(ref / SUBAGENT, sub / "agent-a2898e3.jsonl")
    (sub / "agent-a2898e3.meta.json").write_text(json.dumps({"agentType": "Explore"}), encoding="utf-8")
    (sub / "agent-acompact-1f2e.jsonl").write_text(
        "".join(
            jsonl(
                {
                    "type": "user",
                    "uuid": "c1",
                    "isSidechain": True,
                    "sessionId": "x",
                    "message": {"role": "user", "content": "Summarise the conversation"},
                },
                {
                    "type": "assistant",
                    "uuid": "c2",
                    "isSidechain": True,
                    "sessionId": "x",
                    "message": {"id": "cm1", "content": [{"type": "text", "text": "Summary: …"}]},
                },
            )
        ),
        encoding="utf-8",
    )
    other = root / "projects" / "-tmp-captures-claude-failures-work"
    other.mkdir(parents=True)
    for p in (captures / "claude_failures" / "session").glob("*.jsonl"):
        shutil.copy(p, other / p.name)
    return root


def test_iter_claude_sessions_reads_subagents_and_compaction(tmp_path: Path, ref_traces: Path, captures: Path) -> None:
    root = _project_tree(tmp_path, ref_traces, captures)
    sessions = list(iter_claude_sessions(root))
    assert [s.session_id for s in sessions] == [
        "a758b6ba-8d47-447c-bead-7f25794b7319",
        "278e26a5-be1e-4152-ab6c-2222e364c483",
    ]
    big = sessions[0]
    assert len(big.main.tool_calls()) == 32 and len(big.tool_calls()) == 32 + 33
    by_agent = {t.meta.get("agent_id"): t for t in big.subagents}
    assert set(by_agent) == {"a2898e3", "acompact-1f2e"}
    assert by_agent["a2898e3"].meta["agent_meta"] == {"agentType": "Explore"}
    compact = by_agent["acompact-1f2e"]
    assert compact.meta["compaction"] is True
    assert all(e.injected for e in compact.events if isinstance(e, MessageEvent))
    assert {e.agent_id for e in big.events() if isinstance(e, ToolCallEvent)} == {None, "a2898e3"}
    # the same tree through the other entry points
    assert [s.session_id for s in iter_claude_sessions(root / "projects")] == [s.session_id for s in sessions]
    assert [s.session_id for s in iter_claude_sessions(root / "projects" / "-home-u-app")] == [
        "a758b6ba-8d47-447c-bead-7f25794b7319"
    ]
    one = load_claude_session(root / "projects" / "-home-u-app" / "a758b6ba-8d47-447c-bead-7f25794b7319.jsonl")
    assert len(one.subagents) == 2


def test_missing_subagent_folder_is_fine(tmp_path: Path, ref_traces: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy(ref_traces / SESSION_A758, path)
    session = load_claude_session(path)
    assert session.subagents == [] and len(session.tool_calls()) == 32


def test_session_content_shapes() -> None:
    """String and block-list content give the same events; blank text, images and odd blocks none
    of their own (an assistant line's message still counts as a turn and for usage)."""

    def line(uuid: str, role: str, content: Any, **message: Any) -> dict[str, Any]:
        return {"type": role, "uuid": uuid, "message": {"role": role, "content": content, **message}}

    trace = parse_claude_session(
        jsonl(
            line("a1", "assistant", "said as a string", id="m1", usage={"output_tokens": 2}),
            line(
                "a2",
                "assistant",
                [{"type": "text", "text": "said in a block"}, {"type": "image"}, "x", None],
                id="m2",
                usage={"output_tokens": 3},
            ),
            line("a3", "assistant", "   ", id="m3", usage={"output_tokens": 5}),
            line("a4", "assistant", [{"type": "text", "text": ""}, {"type": "text", "text": 7}], id="m4"),
            line(
                "a5",
                "assistant",
                [
                    {"type": "tool_use", "id": "t1", "name": "Grep"},
                    {"type": "server_tool_use", "id": "t2", "name": "web_search", "input": "q"},
                ],
                id="m5",
            ),
            line(
                "u1",
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [
                            {"type": "text", "text": "a.py:1"},
                            {"type": "image", "source": {}},
                            {"type": "text", "text": ""},
                        ],
                    }
                ],
            ),
            line("u2", "user", [{"type": "tool_result", "tool_use_id": "t2", "content": None, "is_error": True}]),
            line("u3", "user", ""),
            line("u4", "user", [{"type": "text", "text": "  "}, {"type": "text", "text": "typed"}, {"type": "image"}]),
        )
    )
    said = [(m.role, m.text, m.turn) for m in trace.messages(include_injected=True)]
    assert said == [("assistant", "said as a string", 1), ("assistant", "said in a block", 2), ("user", "typed", 5)]
    calls = trace.tool_calls()
    assert [(c.tool, c.source_tool, c.input, c.turn) for c in calls] == [
        ("Grep", "Grep", {}, 5),
        ("WebSearch", "web_search", {}, 5),
    ]
    outputs = {i.call.id: (i.result.output, i.status) for i in trace.invocations() if i.result is not None}
    assert outputs == {"t1": ("a.py:1\n[image]\n", ToolStatus.SUCCESS), "t2": ("", ToolStatus.FAILURE)}
    assert trace.meta["usage"]["output_tokens"] == 10 and trace.meta["api_messages"] == 5


def test_session_record_type_of_any_json_shape_is_skipped() -> None:
    """A ``type`` that is a list, an object or a number is an unknown record type, not a crash."""
    lines = [
        '{"type":["user"],"message":{"content":"x"}}\n',
        '{"type":{"a":1}}\n',
        '{"type":3}\n',
        '{"type":null}\n',
        *jsonl({"type": "user", "uuid": "u", "message": {"content": "hello"}}),
    ]
    trace = parse_claude_session(lines)
    assert [m.text for m in trace.messages("user")] == ["hello"]
    assert trace.meta["skipped_records"] == 4 and trace.meta["bad_lines"] == 0


def test_session_call_and_result_ids_count_once() -> None:
    """A call id seen again (even after its result) and a result id seen again add nothing; a result
    with no call is kept, at the current turn, classified without a tool name."""

    def call(uuid: str, mid: str, cid: str, name: str) -> dict[str, Any]:
        return {
            "type": "assistant",
            "uuid": uuid,
            "message": {
                "id": mid,
                "content": [{"type": "tool_use", "id": cid, "name": name, "input": {"command": "grep -r x ."}}],
            },
        }

    def result(uuid: str, cid: str, text: str, **kw: Any) -> dict[str, Any]:
        return {
            "type": "user",
            "uuid": uuid,
            "message": {"content": [{"type": "tool_result", "tool_use_id": cid, "content": text, **kw}]},
        }

    trace = parse_claude_session(
        jsonl(
            call("a1", "m1", "t1", "Bash"),
            result("u1", "t1", "Exit code 1", is_error=True),
            call("a2", "m2", "t1", "Read"),  # same id again, after its result
            result("u2", "t1", "ok"),  # same result id again
            call("a3", "m3", "t2", "bash"),
            result("u3", "t9", "File does not exist.", is_error=True),  # no such call
        )
    )
    assert [(c.id, c.tool, c.source_tool, c.turn) for c in trace.tool_calls()] == [
        ("t1", "Bash", "Bash", 1),
        ("t2", "Bash", "bash", 3),
    ]
    results = [(e.id, e.turn, e.status, e.error_kind, e.exit_code) for e in trace.events if e.kind == "tool_result"]
    assert results == [
        ("t1", 1, ToolStatus.FAILURE, ErrorKind.EMPTY_SEARCH, 1),
        ("t9", 3, ToolStatus.FAILURE, ErrorKind.NOT_FOUND, None),
    ]
