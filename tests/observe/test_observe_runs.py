"""observe on real trace files made into the shapes that read wrong silently before: a trace that
repeats itself (the same run twice in one file: counted once) and a file holding several runs one
after another (only the first counted). Either way the report names the file, says what was
counted and what to do — in the JSON, the terminal notes and the HTML page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowmeter.observe import notes, observe
from knowmeter.report.html._health import render_health_html

SESSION = "claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
STREAM = "claude-code-stream-json/tielec_issue-398_00_planning_execute.jsonl"
CODEX = "codex-exec-json/tielec_issue-391_01_requirements_review.jsonl"


def _report(folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = observe([folder], workers=1).to_dict()
    return out


def _counts(report: dict[str, Any]) -> tuple[int, int, int, dict[str, Any]]:
    row = report["overall"]
    return row["segments"], row["tool_calls"], row["tool_failures"], row["tokens"]


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize(
    "trace, glue",
    [
        (SESSION, "\n"),
        (STREAM, ""),
        (STREAM, "\n"),
        (CODEX, ""),
        (CODEX, "\n"),
    ],
)
def test_a_trace_that_repeats_itself_is_counted_once_and_said(
    shared_dir: Path, tmp_path: Path, trace: str, glue: str
) -> None:
    """``cat run.jsonl run.jsonl`` (the CLIs end their last line without a newline, so the copy's
    first record is glued to the run's last one; with ``glue`` a newline separates them)."""
    text = (shared_dir / "reference" / "traces" / trace).read_text().rstrip("\n")
    once = _report(_write(tmp_path / "once", "run.jsonl", text + "\n"))
    twice = _report(_write(tmp_path / "twice", "run.jsonl", text + glue + text + "\n"))
    assert _counts(twice) == _counts(once)
    assert once["trace_set"]["partly_read_files"] == []
    [note] = twice["trace_set"]["partly_read_files"]
    assert note.startswith(str(tmp_path / "twice" / "run.jsonl") + ": repeats itself")
    assert "counted once" in note and "keep one copy" in note


def test_concatenated_runs_count_only_the_first_and_say_so(shared_dir: Path, tmp_path: Path) -> None:
    """A Claude stream-json run followed by a Codex exec run in one file: the Codex run was dropped
    without a word before (its records are not stream-json); now the note says which lines."""
    ref = shared_dir / "reference" / "traces"
    stream, codex = (ref / STREAM).read_text(), (ref / CODEX).read_text()
    alone = _report(_write(tmp_path / "alone", "run.jsonl", stream))
    both = _report(_write(tmp_path / "both", "runs.jsonl", stream + "\n" + codex))
    assert _counts(both) == _counts(alone)
    [note] = both["trace_set"]["partly_read_files"]
    first_codex_line = stream.count("\n") + 2
    assert note == (
        f"{tmp_path / 'both' / 'runs.jsonl'}: holds 2 runs one after another: only the first "
        f"(session 2298c39c-3e6d-4996-bee6-9acab80b6639) was counted, not line(s) {first_codex_line}–"
        f"{first_codex_line + codex.count(chr(10))} (session 0199e7cb-a764-7590-bdc7-e2d05b0774a5) "
        "— put each run in its own file"
    )


def test_two_runs_of_one_format_and_a_copy(shared_dir: Path, tmp_path: Path) -> None:
    """Codex run A, run B (another thread), then A again: A counted, B and the copy said."""
    text = (shared_dir / "reference" / "traces" / CODEX).read_text().rstrip("\n") + "\n"
    thread = json.loads(text.splitlines()[0])["thread_id"]
    other = text.replace(thread, "0199e7cb-0000-7000-8000-000000000000")
    alone = _report(_write(tmp_path / "alone", "a.jsonl", text))
    mixed = _report(_write(tmp_path / "mixed", "a.jsonl", text + other + text))
    assert _counts(mixed) == _counts(alone)
    [note] = mixed["trace_set"]["partly_read_files"]
    n = text.count("\n")
    assert f"repeats itself: line(s) {2 * n + 1}–{3 * n} are a copy" in note
    assert (
        f"holds 2 runs one after another: only the first (session {thread}) was counted, not line(s) "
        f"{n + 1}–{2 * n} (session 0199e7cb-0000-7000-8000-000000000000)" in note
    )
    assert note.endswith("— put each run in its own file")


def test_a_later_turn_of_the_same_session_is_read(shared_dir: Path, tmp_path: Path) -> None:
    """A stream whose second ``init`` continues the same session (streaming input starts each turn
    with one) is one run: read whole, no note."""
    lines = (shared_dir / "reference" / "traces" / STREAM).read_text().splitlines()
    init = json.loads(lines[0])
    turn2 = json.dumps({**init, "uuid": "second-turn-init"})
    folder = _write(tmp_path / "turns", "run.jsonl", "\n".join([*lines[:10], turn2, *lines[10:]]) + "\n")
    report = _report(folder)
    assert report["trace_set"]["partly_read_files"] == []
    alone = _report(_write(tmp_path / "alone", "run.jsonl", "\n".join(lines) + "\n"))
    assert _counts(report) == _counts(alone)


def test_the_note_is_printed_and_in_the_html(shared_dir: Path, tmp_path: Path) -> None:
    text = (shared_dir / "reference" / "traces" / CODEX).read_text()
    folder = _write(tmp_path / "t", "run.jsonl", text + text)
    report = observe([folder], workers=1)
    [note] = report.trace_set.partly_read_files
    lines = notes(report)
    at = lines.index("1 file(s) read in part (a run repeated or several runs in one file; --json lists all):")
    assert lines[at + 1] == f"  {note}"
    page = render_health_html(report.to_dict())
    assert "<h3>Files read in part</h3>" in page and "repeats itself" in page
