"""Every real trace in shared/reference parses without loss.

Counts are checked two ways: against an independent raw-JSON count of the same file
(``traces_helpers``), and against the reference numbers in PROVENANCE.md / the capture summaries,
which were re-verified by hand (jq-style scripts) before being written here.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from knowmeter.traces import (
    ToolCallEvent,
    ToolResultEvent,
    ToolStatus,
    Trace,
    TraceFormat,
    load_trace,
    normalise_tool_name,
    parse_claude_stream,
    sniff,
)
from tests.traces.traces_helpers import claude_raw, codex_exec_raw, rollout_raw

A758 = "claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
SUBAGENT = "claude-code-session-jsonl/4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl"
TIELEC_STREAM = "claude-code-stream-json/tielec_issue-398_00_planning_execute.jsonl"
TIELEC_EXEC = "codex-exec-json/tielec_issue-391_01_requirements_review.jsonl"


def _kinds(trace: Trace) -> Counter[tuple[str, str, str | None, int | None]]:
    """(tool, status, error_kind, exit_code) of every result that is not a plain success."""
    out: Counter[tuple[str, str, str | None, int | None]] = Counter()
    for inv in trace.invocations():
        r = inv.result
        if r is not None and (r.status is not ToolStatus.SUCCESS or r.error_kind is not None):
            out[(inv.call.tool, r.status.value, r.error_kind.value if r.error_kind else None, r.exit_code)] += 1
    return out


def _all_trace_files(shared: Path) -> list[Path]:
    ref = shared / "reference"
    files = sorted(p for p in (ref / "traces").rglob("*") if p.suffix in (".jsonl", ".txt"))
    caps = ref / "agent-clis" / "captures"
    return files + sorted(caps.glob("*/stdout.jsonl")) + sorted(caps.glob("*/session/*.jsonl"))


def test_every_reference_file_is_covered_by_the_checks_below(shared_dir: Path) -> None:
    """All 39 files are either parsed and compared below or the one refused repr log."""
    files = _all_trace_files(shared_dir)
    assert len(files) == 5 + 18 + 16
    fmts: Counter[TraceFormat] = Counter()
    for p in files:
        if p.suffix == ".txt":
            continue
        fmts[sniff(p)] += 1
    assert fmts == {
        TraceFormat.CLAUDE_STREAM: 12,
        TraceFormat.CLAUDE_SESSION: 12,
        TraceFormat.CODEX_EXEC: 8,
        TraceFormat.CODEX_ROLLOUT: 6,
    }


def _claude_files(shared: Path) -> list[Path]:
    return [
        p
        for p in _all_trace_files(shared)
        if p.suffix == ".jsonl" and sniff(p) in (TraceFormat.CLAUDE_STREAM, TraceFormat.CLAUDE_SESSION)
    ]


def test_claude_files_match_an_independent_raw_count(shared_dir: Path) -> None:
    checked = 0
    for path in _claude_files(shared_dir):
        raw = claude_raw(path)
        trace = load_trace(path)
        calls = trace.tool_calls()
        assert Counter(c.source_tool for c in calls) == raw["tools"], path
        assert {c.tool for c in calls} == {normalise_tool_name(n) for n in raw["tools"]}, path
        results = [e for e in trace.events if isinstance(e, ToolResultEvent)]
        assert {r.id for r in results} == raw["results"], path
        assert len(results) == len(raw["results"]), path  # no result twice
        not_ok = {r.id for r in results if r.status is not ToolStatus.SUCCESS}
        assert not_ok == raw["errors"], path
        # turn = 1-based index of the deduplicated API message that made the call
        turn_of = {mid: i + 1 for i, mid in enumerate(raw["message_ids"])}
        assert trace.meta["api_messages"] == len(raw["message_ids"]), path
        assert trace.turns == len(raw["message_ids"]), path
        assert {c.id: c.turn for c in calls} == {cid: turn_of[mid] for cid, mid in raw["call_message"].items()}, path
        call_turn = {c.id: c.turn for c in calls}
        assert all(r.turn == call_turn[r.id] for r in results), path  # results carry their call's turn
        checked += 1
    assert checked == 24


def test_codex_exec_files_match_an_independent_raw_count(shared_dir: Path) -> None:
    paths = [p for p in _all_trace_files(shared_dir) if p.suffix == ".jsonl" and sniff(p) is TraceFormat.CODEX_EXEC]
    assert len(paths) == 8
    for path in paths:
        raw = codex_exec_raw(path)
        trace = load_trace(path)
        assert len(trace.tool_calls()) == raw["items"]["command_execution"], path
        exits = Counter(inv.result.exit_code for inv in trace.invocations() if inv.result is not None)
        assert exits == raw["exits"], path
        failed = sum(1 for inv in trace.invocations() if inv.status is ToolStatus.FAILURE)
        assert failed == raw["failed"], path
        assert len(list(trace.messages("assistant"))) == raw["items"]["agent_message"], path


def test_codex_rollouts_match_an_independent_raw_count(captures: Path) -> None:
    paths = sorted(captures.glob("codex_*/session/*.jsonl"))
    assert len(paths) == 6
    for path in paths:
        raw = rollout_raw(path)
        trace = load_trace(path)
        assert Counter(c.source_tool for c in trace.tool_calls()) == raw["calls"], path
        results = [e for e in trace.events if isinstance(e, ToolResultEvent)]
        assert len(results) == raw["outputs"], path
        assert sum(1 for r in results if r.status is ToolStatus.FAILURE) == raw["nonzero"], path


# --- the reference numbers of PROVENANCE.md, file by file ---------------------------------------


def test_a758_session_counts(ref_traces: Path) -> None:
    trace = load_trace(ref_traces / A758)
    assert Counter(c.tool for c in trace.tool_calls()) == {
        "Bash": 16,
        "Read": 6,
        "Glob": 4,
        "Grep": 3,
        "Write": 2,
        "Edit": 1,
    }
    bash_failures = [
        inv.result for inv in trace.invocations() if inv.call.tool == "Bash" and inv.status is ToolStatus.FAILURE
    ]
    assert Counter(r.exit_code for r in bash_failures if r is not None) == {2: 3, 1: 3, 127: 2}
    assert _kinds(trace) == {
        ("Grep", "success", "empty_search", None): 1,  # "No matches found", toolUseResult.numFiles 0
        ("Bash", "failure", "nonzero_exit", 2): 2,  # uv: Permission denied (os error 13) mid-line
        ("Bash", "failure", "not_found", 2): 1,  # ls: cannot access …: No such file or directory
        ("Bash", "failure", "not_found", 1): 2,  # cd: /tmp/review-tool: No such file…; file/head
        ("Bash", "failure", "nonzero_exit", 1): 1,  # Python traceback
        ("Bash", "failure", "command_missing", 127): 2,  # /tmp/review-tool-venv/bin/python missing
    }
    assert trace.meta["agent_version"] == "2.1.76"
    assert trace.meta["session_id"] == "a758b6ba-8d47-447c-bead-7f25794b7319"


def test_subagent_file_counts_and_sibling_cancellations(ref_traces: Path) -> None:
    trace = load_trace(ref_traces / SUBAGENT)
    assert Counter(c.tool for c in trace.tool_calls()) == {"Read": 16, "Glob": 10, "Bash": 5, "Grep": 2}
    assert _kinds(trace) == {
        ("Read", "failure", "not_found", None): 1,  # <tool_use_error>File does not exist.</tool_use_error>
        ("Read", "cancelled", "cancelled_sibling", None): 7,
        ("Glob", "success", "empty_search", None): 2,
    }
    assert {e.agent_id for e in trace.events} == {"a2898e3"}
    assert trace.meta["skipped_records"] == 70  # the progress records


def test_tielec_stream_counts_cost_and_denials(ref_traces: Path) -> None:
    trace = load_trace(ref_traces / TIELEC_STREAM)
    assert Counter(c.tool for c in trace.tool_calls()) == {"Read": 6, "Bash": 6, "Glob": 4, "TodoWrite": 3, "Write": 1}
    assert _kinds(trace) == {
        ("Glob", "success", "empty_search", None): 3,  # the repeated failed search
        ("Glob", "failure", "not_found", None): 1,  # Directory does not exist: .ai-workflow/prompts
        ("Bash", "failure", "permission_denied", None): 2,  # "… requires approval", in permission_denials
    }
    assert trace.meta["num_turns"] == 54
    assert trace.meta["cost_usd"] == pytest.approx(0.7927478)
    assert trace.meta["agent_version"] == "2.0.19"
    assert trace.meta["api_messages"] == 10


def test_tielec_codex_exec_counts(ref_traces: Path) -> None:
    trace = load_trace(ref_traces / TIELEC_EXEC)
    invs = trace.invocations()
    assert len(invs) == 14 and {i.call.tool for i in invs} == {"Bash"}
    assert Counter(i.result.exit_code for i in invs if i.result) == {0: 11, 1: 1, 2: 1, 127: 1}
    assert _kinds(trace) == {
        ("Bash", "failure", "not_found", 1): 1,  # cat @.ai-workflow/…: No such file or directory
        ("Bash", "failure", "not_found", 2): 1,  # ls: cannot access '@.ai-workflow'
        ("Bash", "failure", "command_missing", 127): 1,  # rg: command not found
        ("Bash", "success", "empty_search", 0): 1,  # find … -name '*.md' printed nothing
    }
    assert invs[0].call.input == {"command": "ls"}  # "bash -lc ls" unwrapped
    assert len(list(trace.messages("assistant"))) == 1
    # turn.completed: input_tokens 122252 of which cached_input_tokens 101376 — the IR's
    # input_tokens are the uncached ones (Claude's meaning), the cached ones are cache reads
    assert trace.meta["usage"]["input_tokens"] == 122252 - 101376
    assert trace.meta["usage"]["cache_read_tokens"] == 101376


def test_calls_are_ordered_before_their_results(shared_dir: Path) -> None:
    for path in _all_trace_files(shared_dir):
        if path.suffix != ".jsonl":
            continue
        seen: set[str] = set()
        for e in load_trace(path).events:
            if isinstance(e, ToolCallEvent):
                seen.add(e.id)
            elif isinstance(e, ToolResultEvent):
                assert e.id in seen, (path, e.id)


def test_stream_usage_counts_every_model_of_model_usage(shared_dir: Path) -> None:
    """tielec 398's ``result.usage`` is the main loop's sonnet only; ``modelUsage`` adds haiku's
    3653 input / 285 output tokens (PROVENANCE.md: "modelUsage has two models")."""
    path = shared_dir / "reference" / "traces" / TIELEC_STREAM
    _, summary = parse_claude_stream(path.read_text(encoding="utf-8").splitlines())
    assert summary.usage == {
        "input_tokens": 4266 + 3653,
        "output_tokens": 13415 + 285,
        "cache_read_tokens": 654031,
        "cache_creation_tokens": 100650,
    }
    assert summary.cost_usd == pytest.approx(0.7927478)
