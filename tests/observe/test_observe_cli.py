"""``knowmeter observe`` end to end: the table, JSON, filters, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from knowmeter.cli import cli
from knowmeter.samples import WATERMARK_WARNING
from tests.observe.observe_support import two_segment_codex

REPO = Path(__file__).resolve().parents[2]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, ["observe", *args], catch_exceptions=False)


def test_table_with_watermark(traces: Path, kb_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: cells on one line each (piped output is 120 wide)
    res = invoke(str(traces / "claude-projects"), str(traces / "codex-sessions"), "--kb", str(kb_dir), "--workers", "1")
    assert res.exit_code == 0, res.output
    out = res.output
    for name in ("pdf", "deploy", "imagegen", "review-pr", "(no skill)", "overall"):
        assert name in out
    assert "3 sessions · 7 segments" in out and WATERMARK_WARNING[:60] in out
    assert "coverage of" in out and "33% (1/3)" in out
    assert "most frequent failed searches:" in out and 'Grep "revenue_schema" ×1' in out
    assert "underpowered" in out and "red?" in out  # bands of skills under 5 segments are only indicative
    assert "tool fail = failed calls / calls with a verdict (calls cancelled because a parallel" in out
    # no cost was reported: a note says so instead of a column of "?"
    assert "cost: unknown" in out and not any("┃" in line and "cost" in line for line in out.splitlines())


def test_json_output_and_filters(traces: Path) -> None:
    res = invoke(str(traces), "--json", "--skills", "pdf", "--since", "2026-03-15", "--workers", "2")
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert [h["skill"] for h in d["skills"]] == ["pdf"]
    assert d["skills"][0]["segments"] == 2 and d["watermark"]["count"] == 2
    assert d["skills"][0]["gaps"]["watermark"] == d["watermark"]
    assert d["trace_set"]["window"] == {"since": "2026-03-15T00:00:00Z", "until": None}
    assert d["trace_set"]["skills"] == ["pdf"]


def test_workers_do_not_change_the_json(traces: Path) -> None:
    one = invoke(str(traces), "--json", "--workers", "1").output
    two = invoke(str(traces), "--json", "--workers", "2").output
    assert one == two and json.loads(one)["trace_set"]["segments"] == 7


def test_an_empty_window_is_a_report_not_an_error(traces: Path) -> None:
    res = invoke(str(traces), "--until", "2020-01-01", "--workers", "1")
    assert res.exit_code == 0
    assert "No segments in the trace set" in res.output and "0 segments" in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--last", "7x"], "--last '7x': not a duration"),
        (["--last", "7d", "--since", "2026-01-01"], "give only one of them"),
        (["--since", "yesterday"], "--since 'yesterday': not an ISO date"),
        (["--since", "2026-03-02", "--until", "2026-03-01"], "the window is empty"),
        (["--skills", ","], "--skills: no skill name given"),
        (["--kb", "/nonexistent/kb"], "--kb must be a folder"),
    ],
)
def test_bad_options_exit_2_with_one_line(traces: Path, args: list[str], message: str) -> None:
    res = invoke(str(traces), *args)
    assert res.exit_code == 2
    assert message in res.output and res.output.count("\n") == 1 and "Traceback" not in res.output


def test_a_file_that_is_not_a_trace_exits_2_with_one_line(fixtures: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "knowmeter", "observe", str(fixtures / "not-a-trace.jsonl")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("knowmeter: error: ")
    assert "not-a-trace.jsonl: line 1: not an agent trace" in proc.stderr


def test_missing_path_and_missing_argument(tmp_path: Path) -> None:
    res = invoke(str(tmp_path / "nope"))
    assert res.exit_code == 2 and "no such file or folder" in res.output
    assert invoke().exit_code == 2  # PATH… is required (click's usage error)


def test_real_claude_session_end_to_end(shared_dir: Path) -> None:
    path = (
        shared_dir / "reference" / "traces" / "claude-code-session-jsonl" / "a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "knowmeter", "observe", str(path), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    (row,) = d["skills"]
    assert row["skill"] == "(no skill)" and row["tool_calls"] == 32 and row["segments"] == 1
    assert row["gaps"]["samples_with_gap"] == 1 and d["watermark"]["paths"] == [str(path)]


def test_html_path_that_cannot_be_written_exits_2_before_the_scan(traces: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder\n")
    res = invoke(str(traces), "--html", str(a_file / "health.html"), "--workers", "1")
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "Traceback" not in res.output
    assert res.output.startswith(f"knowmeter: error: --html {a_file / 'health.html'}: {a_file} is a file")
    assert "pass a file in a folder you can write to" in res.output


def _file_size_limit() -> None:
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_html_write_that_fails_leaves_no_partial_file(shared_dir: Path, tmp_path: Path) -> None:
    """The page cannot be written in full (here: a file size limit, as a full disk would do): one
    line naming the file, exit 2, and neither the page nor its temporary file is left behind."""
    target = tmp_path / "out" / "health.html"
    proc = subprocess.run(
        [sys.executable, "-m", "knowmeter", "observe", str(shared_dir / "reference" / "traces"), "--html", str(target)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        preexec_fn=_file_size_limit,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"knowmeter: error: --html {target}: could not")
    assert list((tmp_path / "out").iterdir()) == []


def test_unknown_tokens_are_a_question_mark_not_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Codex session of two segments reports one token total: neither segment's usage is known."""
    monkeypatch.setenv("COLUMNS", "200")
    res = invoke(str(two_segment_codex(tmp_path / "codex")), "--workers", "1")
    assert res.exit_code == 0, res.output
    rows = {line.split("│")[1].strip(): line for line in res.output.splitlines() if line.startswith("│")}
    assert set(rows) == {"imagegen", "(no skill)", "overall"}
    for row in rows.values():
        cells = [c.strip() for c in row.split("│")]
        assert "?" in cells and "0 / 0" not in cells
    assert "? = unknown: a Codex session with several segments reports one total" in res.output


def test_a_file_that_cannot_be_read_exits_2_with_one_line() -> None:
    """A trace file named on the command line that cannot be read (here /proc/self/mem, whose first
    page fails with EIO; a file without read permission fails with EACCES the same way)."""
    mem = Path("/proc/self/mem")
    if not mem.is_file():
        pytest.skip("needs Linux's /proc")
    res = invoke(str(mem))
    assert res.exit_code == 2
    assert res.output == f"knowmeter: error: {mem}: cannot read (Input/output error); check its permissions\n"


def test_a_folder_that_cannot_be_listed_is_named_among_the_skipped(shared_dir: Path, tmp_path: Path) -> None:
    """A subfolder this user may not list is one of the report's skipped entries, with the reason;
    its sessions were left out in silence (the other folders are read all the same)."""
    import os
    import shutil

    traces = shared_dir / "reference" / "traces"
    readable, locked = tmp_path / "a", tmp_path / "b"
    readable.mkdir()
    locked.mkdir()
    shutil.copy(traces / "claude-code-session-jsonl" / "a758b6ba-8d47-447c-bead-7f25794b7319.jsonl", readable)
    shutil.copy(traces / "codex-exec-json" / "tielec_issue-391_01_requirements_review.jsonl", locked)
    cmd = [sys.executable, "-m", "knowmeter", "observe", str(tmp_path), "--json", "--workers", "1"]
    if os.geteuid() == 0:  # root lists any folder: run it without the capabilities that let it
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("as root, a folder is made unreadable with setpriv (util-linux), which is missing")
        cmd = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--", *cmd]
    locked.chmod(0)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    finally:
        locked.chmod(0o755)
    if proc.stderr.startswith("setpriv:"):
        pytest.skip(f"setpriv cannot drop capabilities here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    ts = json.loads(proc.stdout)["trace_set"]
    assert ts["files"] == 1
    assert ts["skipped_files"] == [
        f"{locked}: cannot read the folder (Permission denied); the sessions in it are left out — check its permissions"
    ]
