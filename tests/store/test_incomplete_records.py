"""A results.jsonl line that is valid JSON but lacks a field (a damaged or cut record) makes its
task missing: the report says INCOMPLETE and names the line, and ``--resume`` runs that task
again (README: "Resuming"); a record without even its task_id is no crash either."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowmeter.store import finished_task_ids
from tests.support.cli import init_demo, km

pytestmark = pytest.mark.slow


def _damage(results: Path, drop: str, index: int = 1) -> str:
    lines = results.read_text().splitlines(keepends=True)
    rec = json.loads(lines[index])
    del rec[drop]
    lines[index] = json.dumps(rec) + "\n"
    results.write_text("".join(lines))
    return str(rec.get("task_id"))


@pytest.mark.parametrize("drop", ["grade", "exec", "task_id"])
def test_a_record_lacking_a_field_is_a_missing_task_that_resume_runs(tmp_path: Path, drop: str) -> None:
    project = init_demo(tmp_path / "p")
    assert km("eval", "--report-only", "--bootstrap-samples", "200", cwd=project).returncode == 0
    run_dir = next((project / ".knowmeter" / "runs").iterdir())
    results = run_dir / "results.jsonl"
    total = len(results.read_text().splitlines())
    damaged = _damage(results, drop)
    assert len(finished_task_ids(results)) == total - 1

    report = km("report", "latest", "--json", "--bootstrap-samples", "200", cwd=project)
    assert report.returncode in (0, 1), report.stderr
    data = json.loads(report.stdout)
    assert data["decision"]["outcome"] == "INCOMPLETE"
    assert "incomplete" in json.dumps(data) and "record 2" in json.dumps(data)

    resumed = km("eval", "--resume", "latest", "--json", "--bootstrap-samples", "200", cwd=project)
    assert resumed.returncode == 0, resumed.stderr
    assert len(finished_task_ids(results)) == total
    assert json.loads(resumed.stdout)["decision"]["outcome"] != "INCOMPLETE"
    if drop != "task_id":
        stored = [json.loads(line) for line in results.read_text().splitlines()]
        assert sum(1 for r in stored if r.get("task_id") == damaged and "grade" in r and "exec" in r) == 1
