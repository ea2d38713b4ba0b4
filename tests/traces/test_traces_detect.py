"""Format detection, refusal of files that are not traces, and the folder iterator."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knowmeter.errors import InputError
from knowmeter.traces import TraceFormat, detect_format, iter_sessions, load_trace, sniff

REPR_LOG = "claude-agent-sdk-python-repr/tielec_issue-304_05_testing_execute.txt"


@pytest.mark.parametrize(
    ("line", "fmt"),
    [
        ('{"type":"system","subtype":"init","session_id":"s","tools":[]}', TraceFormat.CLAUDE_STREAM),
        ('{"duration_api_ms":297,"session_id":"s","type":"result","subtype":"success"}', TraceFormat.CLAUDE_STREAM),
        ('{"type":"queue-operation","operation":"enqueue","sessionId":"s"}', TraceFormat.CLAUDE_SESSION),
        ('{"parentUuid":null,"isSidechain":false,"type":"user","message":{}}', TraceFormat.CLAUDE_SESSION),
        ('{"type":"ai-title","aiTitle":"t","sessionId":"s"}', TraceFormat.CLAUDE_SESSION),
        ('{"type":"file-history-snapshot","messageId":"m","snapshot":{}}', TraceFormat.CLAUDE_SESSION),
        ('{"type":"thread.started","thread_id":"t"}', TraceFormat.CODEX_EXEC),
        ('{"timestamp":"x","type":"session_meta","payload":{"id":"s"}}', TraceFormat.CODEX_ROLLOUT),
        ('{"type":"init","timestamp":"x","session_id":"s","model":"gemini"}', None),
        ('{"id":"0","msg":{"type":"exec_command_begin"}}', None),
        ("SystemMessage(subtype='init', data={'type': 'system'})", None),
        ("[1, 2]", None),
        ('{"type":"user","message":', None),
    ],
)
def test_detect_format(line: str, fmt: TraceFormat | None) -> None:
    assert detect_format(line) is fmt


def test_python_repr_log_is_read_without_evaluating_it(ref_traces: Path) -> None:
    """A log of Claude SDK messages written with str() (FORMATS.md §1): every tool call, result,
    text and the result's cost, as the same messages in stream-json would give."""
    trace = load_trace(ref_traces / REPR_LOG)
    assert trace.meta["format"] == "claude-sdk-repr" and trace.meta["bad_lines"] == 0
    assert trace.meta["session_id"] == "6dedeaee-9535-4610-8b39-537003b86efe" and trace.meta["cwd"] == "/workspace"
    calls = trace.invocations()
    assert len(calls) == 17 and all(c.result is not None for c in calls)
    assert calls[2].call.tool == "Read" and calls[2].call.input == {
        "file_path": "/workspace/scripts/ai-workflow/pytest.ini"
    }
    assert trace.meta["cost_usd"] == pytest.approx(0.81092855) and trace.meta["num_turns"] == 49


@pytest.mark.parametrize(
    "line",
    [
        "AssistantMessage(content=[TextBlock(text=__import__('os').system('touch /tmp/pwned'))], model='m')",
        "AssistantMessage(content=[TextBlock(text='a' + 'b')], model='m')",
        "AssistantMessage(content=[TextBlock(text='unterminated)], model='m')",
        "AssistantMessage(" * 5000,
    ],
)
def test_a_repr_line_that_is_not_literal_sdk_data_is_a_damaged_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "log.txt"
    path.write_text("AssistantMessage(content=[TextBlock(text='hello')], model='m')\n" + line + "\n")
    trace = load_trace(path)
    assert trace.meta["bad_lines"] == 1
    assert [m.text for m in trace.messages("assistant")] == ["hello"]
    assert not Path("/tmp/pwned").exists()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "empty file"),
        ("\n\n  \n", "empty file"),
        ("hello world\nnot json\n", "line 1: not an agent trace (not JSON lines)"),
        ('{"type":"init","session_id":"s","model":"gemini-2.5"}\n', "line 1: Gemini CLI stream-json is not supported"),
        ('{"id":"0","msg":{"type":"task_started"}}\n', "legacy Codex protocol stream"),
        ('\n{"name":"x","version":1}\n', "line 2: not an agent trace (unrecognised JSON record, type None)"),
    ],
)
def test_other_files_are_refused(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        load_trace(path)


def test_paths_that_are_not_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        sniff(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="is a folder"):
        sniff(tmp_path)
    zst = tmp_path / "rollout-1.jsonl.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd")
    with pytest.raises(InputError, match="decompress first"):
        sniff(zst)


def test_first_line_truncated_then_valid_lines(tmp_path: Path, captures: Path) -> None:
    lines = (captures / "codex_shell_ok" / "stdout.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "x.jsonl"
    path.write_text('{"type":"thread.sta\n' + "".join(lines[1:]), encoding="utf-8")
    assert sniff(path) is TraceFormat.CODEX_EXEC
    trace = load_trace(path)
    assert len(trace.tool_calls()) == 1 and trace.meta["bad_lines"] == 1
    assert trace.meta["truncated_last_line"] is False


def test_iter_sessions_over_a_mixed_folder(tmp_path: Path, ref_traces: Path, captures: Path) -> None:
    shutil.copytree(ref_traces, tmp_path / "traces")
    subagents = tmp_path / "traces" / "claude-code-session-jsonl" / "a758b6ba-8d47-447c-bead-7f25794b7319" / "subagents"
    subagents.mkdir(parents=True)
    shutil.copy(
        ref_traces
        / "claude-code-session-jsonl"
        / "4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl",
        subagents / "agent-a1.jsonl",
    )
    shutil.copy(captures / "codex_failures_readonly" / "stdout.jsonl", tmp_path / "exec.jsonl")
    (tmp_path / "notes.jsonl").write_text('{"note": 1}\n', encoding="utf-8")
    skipped: list[Path] = []
    sessions = list(iter_sessions(tmp_path, skipped=skipped))
    assert sorted(s.main.source for s in sessions) == sorted(
        [
            "codex-exec-json",
            "claude-session-jsonl",
            "claude-session-jsonl",
            "claude-stream-json",
            "codex-exec-json",
            "claude-sdk-repr",
        ]
    )
    # candidates are told by content (the .txt Python-repr log is read); the note is named, not dropped
    assert skipped == [tmp_path / "notes.jsonl"]
    [a758] = [s for s in sessions if s.session_id.startswith("a758")]
    assert [t.meta["agent_id"] for t in a758.subagents] == ["a1"]
    assert len(list(iter_sessions(tmp_path / "exec.jsonl"))) == 1


def test_a_byte_order_mark_is_ignored(tmp_path: Path, captures: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (captures / "claude_failures" / "stdout.jsonl").read_bytes())
    trace = load_trace(path)
    assert len(trace.tool_calls()) == 4 and trace.meta["bad_lines"] == 0
