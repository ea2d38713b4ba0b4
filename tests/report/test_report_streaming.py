"""A report is built from results.jsonl streamed (issue 19 item 13): the in-memory ``Report``
holds the aggregates and a ``StoredTasks`` that reads each task record from disk when used; the
joined view (report.json with the tasks of the results file it names) has the stored records, in
report order, one per task id."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import knowmeter
from knowmeter.report import joined_report
from knowmeter.store import StoredTasks, TaskRecord, iter_results


def test_the_report_reads_its_tasks_from_the_results_file_and_writes_them_as_stored(demo: Path, tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(demo, project, ignore=shutil.ignore_patterns(".knowmeter"))
    report = knowmeter.evaluate(project / "eval.yaml", bootstrap_samples=200)
    run_dir = project / ".knowmeter" / "runs" / report.run.id
    stored = joined_report(run_dir)

    assert isinstance(report.tasks, StoredTasks)
    assert len(report.tasks) == report.run.tasks_done == len(stored["tasks"]) > 0
    assert report.to_dict() == stored  # the streamed file is the report's JSON form, tasks included
    order = [(t["repeat"], t["sample_id"], t["variant"]) for t in stored["tasks"]]
    assert order == sorted(order)
    lines = {r["task_id"]: r for r in iter_results(run_dir / "results.jsonl")}
    assert stored["tasks"] == [lines[t["task_id"]] for t in stored["tasks"]]  # as stored, nothing added
    first, last = report.tasks[0], report.tasks[-1]
    assert isinstance(first, TaskRecord) and first.stored() == stored["tasks"][0]
    assert last.stored() == stored["tasks"][-1] and report.tasks[1:3] == list(report.tasks)[1:3]
    dumped = json.loads(report.model_dump_json())  # pydantic's own dump reads them too
    assert [t["task_id"] for t in dumped["tasks"]] == [t["task_id"] for t in stored["tasks"]]


def test_a_task_stored_twice_is_written_and_counted_once(demo: Path, tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(demo, project, ignore=shutil.ignore_patterns(".knowmeter"))
    report = knowmeter.evaluate(project / "eval.yaml", bootstrap_samples=200)
    results = project / ".knowmeter" / "runs" / report.run.id / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(b"".join(lines) + lines[0] + b"{not json\n")

    again = knowmeter.rescore(report.run.id, output_dir=project / ".knowmeter")
    stored = joined_report(results.parent)
    assert len(stored["tasks"]) == len({t["task_id"] for t in stored["tasks"]}) == len(lines)
    problems = again.run.results_problems or []
    assert any("not valid JSON" in p for p in problems) and any(
        "1 duplicate record(s) of 1 task(s)" in p for p in problems
    )
