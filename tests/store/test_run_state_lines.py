"""What ``runs`` and ``report`` say about a run that is not finished: a killed run with a task
stored twice counts it once (never "81/80 tasks"); ``report`` on a run another process is still
executing is refused with one line instead of writing an INCOMPLETE report and advising a
``--resume`` that would be refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowmeter.store import RunDir
from tests.support.cli import init_demo, km

pytestmark = pytest.mark.slow


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, RunDir]:
    project = init_demo(tmp_path / "p")
    assert km("eval", "--report-only", "--bootstrap-samples", "100", cwd=project).returncode == 0
    return project, RunDir(next((project / ".knowmeter" / "runs").iterdir()))


def test_a_duplicate_line_counts_once_in_runs(stored: tuple[Path, RunDir]) -> None:
    project, run = stored
    lines = run.results_file.read_text().splitlines(keepends=True)
    total = len(lines)
    run.results_file.write_text("".join([*lines, lines[0], '{"task_id": "cut']))  # a duplicate, a cut line
    (project / ".knowmeter" / "index.sqlite").unlink()  # a killed run has no index row
    run.report_file.unlink()
    listed = km("runs", "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["tasks_done"] == total and row["tasks_total"] == total


def test_report_on_a_run_still_executing_is_refused(stored: tuple[Path, RunDir]) -> None:
    project, run = stored
    before = run.report_file.read_bytes()
    holder = RunDir(run.path)
    holder.lock()  # as the process executing it holds it
    try:
        r = km("report", "latest", cwd=project)
    finally:
        holder.unlock()
    assert r.returncode == 2 and "still being executed" in r.stderr and "--resume" not in r.stderr, r.stderr
    assert run.report_file.read_bytes() == before
    assert km("report", "latest", "--bootstrap-samples", "100", cwd=project).returncode == 0


def test_stored_tasks_counts_distinct_complete_lines(tmp_path: Path) -> None:
    from knowmeter.store._index import _stored_tasks

    results = tmp_path / "results.jsonl"
    results.write_bytes(
        b'{"task_id":"a","x":1}\n{"task_id": "b"}\n{"x": 1, "task_id": "c"}\n{"task_id":"a"}\ngarbage\n{"task_id":"d"'
    )
    assert _stored_tasks(results) == 3  # a (twice), b, c; not the garbage nor the cut d


def test_a_run_json_without_a_status_is_reported_and_listed_as_killed(stored: tuple[Path, RunDir]) -> None:
    """run.json always gets a status when the run starts; one without (null) never finished, as a
    killed run: its report is rebuilt and ``runs`` lists it killed (the index once failed on it)."""
    project, run = stored
    record = json.loads(run.run_file.read_text())
    record["status"] = None
    run.run_file.write_text(json.dumps(record))
    r = km("report", "latest", "--bootstrap-samples", "100", cwd=project)
    assert r.returncode != 0 and "internal error" not in r.stderr, r.stderr
    listed = km("runs", "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert [row["status"] for row in json.loads(listed.stdout)] == ["killed"]
