"""A reader who stops reading (``knowmeter eval | head -1`` under ``set -o pipefail``) does not
change the exit code: it is the stored decision's, with no traceback, and the command still
finishes its work. Real processes writing to real pipes whose read end the test closes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import KNOWMETER, init_demo, km

#: As a user's shell runs it: stdout block-buffered when it is a pipe.
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, "COLUMNS": "100"}
#: As many CI images run it (PYTHONUNBUFFERED=1): stdout and stderr without a buffer.
UNBUFFERED = {**ENV, "PYTHONUNBUFFERED": "1"}


def stored_decision(demo: Path) -> dict:  # type: ignore[type-arg]
    """The decision in the report.json of the newest run (``knowmeter runs`` lists it first)."""
    newest = json.loads(km("runs", "--json", cwd=demo).stdout)[0]["id"]
    return json.loads((demo / ".knowmeter" / "runs" / newest / "report.json").read_text())["decision"]  # type: ignore[no-any-return]


def assert_no_traceback(stderr: str) -> None:
    for sign in ("Traceback", "Exception ignored", "BrokenPipeError", "Broken pipe", "internal error"):
        assert sign not in stderr, stderr


def assert_progress_kept(demo: Path, code: int, stderr: str) -> None:
    """The demo's eval decided PROGRESS, exited 0 as that decision says, and printed its progress
    without a traceback."""
    decision = stored_decision(demo)
    assert (decision["outcome"], code) == ("PROGRESS", decision["exit_code"]) == ("PROGRESS", 0)
    assert_no_traceback(stderr)
    assert "46/46 tasks" in stderr


def first_line_then_close(*args: str, cwd: Path, stderr: Path, env: dict[str, str] = ENV) -> tuple[str, int]:
    """Run ``knowmeter ARGS``, read the first line of its stdout, close the pipe, wait: that line
    and the exit code (stderr goes to the file ``stderr``)."""
    with stderr.open("w") as err:
        proc = subprocess.Popen([*KNOWMETER, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        proc.stdout.close()
        return line, proc.wait(timeout=300)


def reader_gone_from_the_start(*args: str, cwd: Path, stream: str, env: dict[str, str] = ENV) -> tuple[str, int]:
    """Run ``knowmeter ARGS`` with ``stream`` ("stdout" or "stderr") a pipe nobody reads (its read
    end closed before the command writes anything): the other stream's text and the exit code."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = write_end if stream == "stdout" else subprocess.PIPE
        err = write_end if stream == "stderr" else subprocess.PIPE
        proc = subprocess.run([*KNOWMETER, *args], cwd=cwd, stdout=out, stderr=err, text=True, env=env, timeout=300)
    finally:
        os.close(write_end)
    other = proc.stderr if stream == "stdout" else proc.stdout
    return other, proc.returncode


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_demo(tmp_path_factory.mktemp("pipe") / "demo")


BUFFERING = pytest.mark.parametrize("env", [ENV, UNBUFFERED], ids=["buffered", "unbuffered"])


@pytest.mark.slow
@BUFFERING
def test_eval_json_read_one_line_then_closed_exits_with_the_stored_decision(
    demo: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    # report.json (~280 kB) is far more than a pipe holds: the writes after the close fail for sure.
    line, code = first_line_then_close("eval", "--json", cwd=demo, stderr=tmp_path / "err", env=env)
    assert line == "{\n"
    assert_progress_kept(demo, code, (tmp_path / "err").read_text())


@pytest.mark.slow
@BUFFERING
def test_eval_summary_to_a_closed_pipe_exits_with_the_stored_decision(demo: Path, env: dict[str, str]) -> None:
    stderr, code = reader_gone_from_the_start("eval", cwd=demo, stream="stdout", env=env)
    assert_progress_kept(demo, code, stderr)


@pytest.mark.slow
@BUFFERING
def test_eval_with_stderr_closed_still_prints_the_summary_and_exits_with_the_decision(
    demo: Path, env: dict[str, str]
) -> None:
    stdout, code = reader_gone_from_the_start("eval", cwd=demo, stream="stderr", env=env)
    decision = stored_decision(demo)
    assert code == decision["exit_code"] == 0
    assert stdout.startswith("PROGRESS · ") and "SHIP — the treatment is significantly better" in stdout


@pytest.mark.slow
def test_report_read_one_line_then_closed_exits_with_the_decision_and_writes_its_files(
    demo: Path, tmp_path: Path
) -> None:
    km("eval", "--threshold", "4.9", cwd=demo)  # a run that does not pass: exit 1 must stay 1
    decision = stored_decision(demo)
    assert (decision["outcome"], decision["exit_code"]) == ("CAUTIOUS", 1)
    html = tmp_path / "page.html"  # written after the summary is printed
    line, code = first_line_then_close(
        "report", "latest", "--json", "--html", str(html), cwd=demo, stderr=tmp_path / "err"
    )
    assert (line, code) == ("{\n", 1)
    assert_no_traceback((tmp_path / "err").read_text())
    assert html.read_text().startswith("<!DOCTYPE html>")

    stderr, code = reader_gone_from_the_start("report", "latest", cwd=demo, stream="stdout")
    assert code == 1
    assert_no_traceback(stderr)


def test_a_command_without_an_outcome_ends_quietly_too(tmp_path: Path) -> None:
    line, code = first_line_then_close("docs", "--schema", "report", cwd=tmp_path, stderr=tmp_path / "err")
    assert line == "{\n" and code == 0
    assert_no_traceback((tmp_path / "err").read_text())
