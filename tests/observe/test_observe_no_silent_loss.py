"""``observe`` never loses a file in silence (issue 28 point 6), on real logs of shared/reference:
foreign / empty / unreadable files among explicit paths, subagent transcripts whose session file
is absent, corrupt and truncated lines."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from click.testing import CliRunner, Result

from knowmeter.cli import cli

CORPUS = "reference/traces-corpus/tielec"
ORPHAN = (
    "reference/traces/claude-code-session-jsonl/4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl"
)
A758 = "reference/traces/claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"


def _observe(*args: str) -> Result:
    return CliRunner().invoke(cli, ["observe", "--workers", "1", *args], catch_exceptions=False)


def test_foreign_and_empty_files_among_explicit_paths_are_skipped_with_one_line_each(
    shared_dir: Path, tmp_path: Path
) -> None:
    # what a shell glob over a real log folder passes: two logs (one of Python reprs), an empty file, a note
    log = shared_dir / CORPUS / "issue-437_00_planning_execute__999e5c6a.txt"
    empty, note = tmp_path / "empty.jsonl", tmp_path / "README.txt"
    empty.write_text("")
    note.write_text("notes about the run\n")
    repr_log = shared_dir / CORPUS / "issue-305_07_report_review__d74c1fc6.txt"
    res = _observe(str(log), str(empty), str(note), str(repr_log), "--json")
    assert res.exit_code == 0, res.output
    ts = json.loads(res.output)["trace_set"]
    assert ts["files"] == 2 and len(ts["skipped_files"]) == 2
    assert all("\n" not in line for line in ts["skipped_files"])
    assert any("empty.jsonl: empty file" in line for line in ts["skipped_files"])
    # nothing readable at all: exit 2 with the first reason
    res = _observe(str(empty), str(note))
    assert res.exit_code == 2 and "empty.jsonl: empty file" in res.output and len(res.output.splitlines()) == 1


def test_an_orphan_subagent_transcript_is_its_own_segment_and_said(shared_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-USER-projects-spotter"
    sub = project / "4d5611e5-241a-462a-8d15-5122611a9569" / "subagents"
    sub.mkdir(parents=True)
    shutil.copy(shared_dir / ORPHAN, sub / "agent-a2898e3.jsonl")  # its session file is not there
    shutil.copy(shared_dir / A758, project)
    res = _observe(str(tmp_path / "projects"), "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["trace_set"]["sessions"] == 2
    assert report["trace_set"]["orphan_subagents"] == [
        "-home-USER-projects-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl"
    ]
    # its 33 tool calls count (they used to vanish): the a758 session has 32
    assert report["overall"]["tool_calls"] == 32 + 33
    text = _observe(str(tmp_path / "projects")).output
    assert "1 subagent transcript(s) whose session file is absent, analysed as sessions of their own:" in text


def test_corrupt_and_truncated_lines_are_counted_in_the_output(shared_dir: Path, tmp_path: Path) -> None:
    lines = (shared_dir / A758).read_text(encoding="utf-8").splitlines()
    damaged = tmp_path / "a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
    # a line cut in the middle of the file, and a last line cut short (a session still being written)
    damaged.write_text("\n".join([*lines[:20], lines[20][:50], *lines[21:], lines[-1][:30]]) + "\n", encoding="utf-8")
    res = _observe(str(damaged))
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "1 file(s) with corrupt or truncated lines (each passed over, the rest read):" in out
    assert "2 corrupt or truncated line(s) passed over (the last one truncated)" in out


def test_retried_commands_are_apart_unless_counted(shared_dir: Path) -> None:
    # a758 turns 14–16: `uv run python -c …` failing three times — a retried command, not a gap
    res = _observe(str(shared_dir / A758), "--json")
    gaps = json.loads(res.output)["skills"][0]["gaps"]
    assert [s["target"] for s in gaps["retried"]] == ["python && cat"]
    assert "retried_command" not in gaps["signals_by_source"]
    assert "1 retried command(s)" in " ".join(_observe(str(shared_dir / A758)).output.split())
    counted = json.loads(_observe(str(shared_dir / A758), "--json", "--count-retried-commands").output)
    gaps = counted["skills"][0]["gaps"]
    assert gaps["signals_by_source"]["retried_command"] == 1 and gaps["retried"] == []


def test_japanese_hedging_candidates_are_said_not_judged(shared_dir: Path) -> None:
    # 465_04 (an implementation run in Japanese): "このメソッドは使用されていない可能性がある" is a
    # candidate of the Japanese net, which is not trusted alone — said under the table, never counted
    log = shared_dir / CORPUS / "issue-465_04_implementation_execute__66d9798b.txt"
    out = " ".join(_observe(str(log)).output.split())
    assert "hedging: 1 Japanese candidate sentence(s) not judged" in out
    report = json.loads(_observe(str(log), "--json").output)
    assert report["skills"][0]["gaps"]["signals_by_source"]["hedging"] == 0
    # 456_06 (a test-phase review): its "…か不明" / "未確認" remarks on the reviewed report are no
    # candidates at all now (remarks on a document, not doubt), so nothing is said
    review = shared_dir / CORPUS / "issue-456_06_testing_review__5b4ba365.txt"
    assert "not judged" not in " ".join(_observe(str(review)).output.split())


def test_files_read_that_give_no_segment_are_listed(shared_dir: Path, tmp_path: Path) -> None:
    """A file that reads as a Claude session but holds no agent turn (only a user line, or an
    assistant record whose message is not an object) is neither a session nor skipped: it was
    counted in ``files`` and said nowhere, and the summary blamed the window and --skills."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(shared_dir / CORPUS / "issue-437_00_planning_execute__999e5c6a.txt", folder / "real.txt")
    (folder / "user-only.jsonl").write_text('{"type":"user","message":{"content":"x"}}\n')
    (folder / "odd.jsonl").write_text('{"type":"assistant","message":"not an object"}\n')
    res = _observe(str(folder), "--json")
    assert res.exit_code == 0, res.output
    ts = json.loads(res.output)["trace_set"]
    assert (ts["files"], ts["sessions"]) == (3, 1)
    assert ts["files_without_segments"] == ["odd.jsonl", "user-only.jsonl"]
    text = _observe(str(folder)).output
    assert "2 file(s) read that gave no segment (no agent turn in them" in text


def test_a_named_pipe_given_is_said_to_be_one(shared_dir: Path, tmp_path: Path) -> None:
    """It was 'cannot read the folder (Not a directory) … check its permissions'."""
    os.mkfifo(tmp_path / "live.jsonl")
    log = shared_dir / CORPUS / "issue-437_00_planning_execute__999e5c6a.txt"
    res = _observe(str(tmp_path / "live.jsonl"), str(log), "--json")
    assert res.exit_code == 0, res.output
    (line,) = json.loads(res.output)["trace_set"]["skipped_files"]
    assert line.startswith(f"{tmp_path / 'live.jsonl'}: a named pipe or a device, not a trace file or folder; pass")
