"""Subagents known only from the main file's ``agent_progress`` records (their ``subagents/``
files missing). The subagent's records are the real spotter subagent transcript's lines
(``agent-a2898e3``), carried in ``progress`` records the way Claude Code 2.1.x writes them
(``data: {type: agent_progress, agentId, prompt, message: <the subagent's record>}``,
``parentToolUseID`` = the ``Task`` call)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from knowmeter.observe import observe
from knowmeter.traces import load_claude_session, parse_claude_session
from tests.observe.observe_support import SessionFile

SUBAGENT = (
    "reference/traces/claude-code-session-jsonl/4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl"
)
SESSION = "d4444444-4444-4444-8444-444444444444"


def _session(shared_dir: Path, root: Path, *, with_file: bool, compact: bool = True) -> tuple[Path, int]:
    """A main session that spawns the spotter subagent; its file is written beside it only when
    ``with_file``. Returns the main file and the subagent's own tool-call count."""
    sub_lines = (shared_dir / SUBAGENT).read_text(encoding="utf-8").splitlines()
    records = [json.loads(x) for x in sub_lines]
    calls = len(parse_claude_session(sub_lines, agent_id="a2898e3").tool_calls())
    main = SessionFile(root / "-home-u-spotter" / f"{SESSION}.jsonl")
    main.human("2026-02-12T16:00:00.000Z", "explore how transcripts are rendered")
    main.call(
        "2026-02-12T16:00:01.000Z",
        "toolu_task1",
        "Task",
        {"description": "explore", "prompt": "Explore the transcript rendering", "subagent_type": "Explore"},
    )
    for n, rec in enumerate(r for r in records if r.get("type") in ("user", "assistant")):
        main.lines.append(
            {
                "parentUuid": None,
                "isSidechain": False,
                "type": "progress",
                "sessionId": SESSION,
                "cwd": main.cwd,
                "version": "2.1.39",
                "uuid": f"progress-{n}",
                "timestamp": rec.get("timestamp", "2026-02-12T16:01:00.000Z"),
                "parentToolUseID": "toolu_task1",
                "toolUseID": f"agent_msg_{n}",
                "data": {
                    "type": "agent_progress",
                    "agentId": "a2898e3",
                    "prompt": "Explore the transcript rendering",
                    "message": rec,
                },
            }
        )
    main.result("2026-02-12T16:10:00.000Z", "toolu_task1", "Report done.\nagentId: a2898e3")
    path = main.write()
    if compact:  # Claude Code writes compact JSON (what the reader's byte check looks at)
        path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in main.lines), encoding="utf-8")
    if with_file:
        folder = path.with_suffix("") / "subagents"
        folder.mkdir(parents=True)
        shutil.copy(shared_dir / SUBAGENT, folder / "agent-a2898e3.jsonl")
    return path, calls


@pytest.mark.parametrize("compact", [True, False])
def test_missing_subagent_files_are_replaced_by_progress_records(
    shared_dir: Path, tmp_path: Path, compact: bool
) -> None:
    path, calls = _session(shared_dir, tmp_path, with_file=False, compact=compact)
    session = load_claude_session(path)
    [sub] = session.subagents
    assert sub.meta["from_progress"] and sub.meta["parent_tool_use_id"] == "toolu_task1"
    assert len(sub.tool_calls()) == calls == 33  # PROVENANCE.md: 33 tool calls in this subagent
    assert {e.agent_id for e in sub.events} == {"a2898e3"}
    assert len(session.main.tool_calls()) == 1  # the progress records add nothing to the main agent


def test_present_subagent_files_win_and_nothing_counts_twice(shared_dir: Path, tmp_path: Path) -> None:
    path, calls = _session(shared_dir, tmp_path, with_file=True)
    session = load_claude_session(path)
    [sub] = session.subagents
    assert "from_progress" not in sub.meta and len(sub.tool_calls()) == calls


def test_observe_counts_a_progress_only_subagent_once(shared_dir: Path, tmp_path: Path) -> None:
    without, calls = _session(shared_dir, tmp_path / "without", with_file=False)
    with_file, _ = _session(shared_dir, tmp_path / "with", with_file=True)
    reports = [observe([p], workers=1) for p in (without, with_file)]
    for report in reports:
        assert report.overall is not None
        assert (report.overall.tool_calls, report.overall.subagents) == (1 + calls, 1)
        # the subagent's missing .heex read is a failed search of the segment, wherever it came from
        targets = [s.target for row in report.skills for s in row.gaps.signals if s.source == "failed_search"]
        assert any(t.endswith("session_live.html.heex") for t in targets)
    assert reports[0].overall is not None and reports[1].overall is not None
    assert reports[0].overall.tokens == reports[1].overall.tokens
