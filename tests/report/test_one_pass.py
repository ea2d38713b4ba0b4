"""Finishing a run reads results.jsonl once (issue 32 point 1): every section of report.json is
folded over the records as they are read, whatever order the tasks finished in; report.json
stores no task a second time (issue 32 point 4): it names the results file, and readers join
the tasks back in from it."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knowmeter import jsonio
from knowmeter.pipeline import finalize, rebuild_report
from knowmeter.report import REPORT_SCHEMA_VERSION, Report, ReportOverrides, ReportView, joined_report, read_report
from knowmeter.store import RunDir, TaskRecord, iter_results


def _copy(run: Path, tmp_path: Path) -> RunDir:
    """The run copied into a store of its own (so rebuilding it touches no other test's run)."""
    copy = tmp_path / "store" / "runs" / run.name
    shutil.copytree(run, copy)
    return RunDir(copy)


def _records_parsed(monkeypatch: pytest.MonkeyPatch, action: Callable[[], Report]) -> tuple[int, Report]:
    """(how many task records were parsed from JSON while ``action`` ran — into JSON objects, or
    straight into ``TaskRecord`` — and its report)."""
    loads, from_json, parsed = jsonio.loads, TaskRecord.model_validate_json, [0]

    def counting(data: bytes | str) -> Any:
        value = loads(data)
        parsed[0] += isinstance(value, dict) and "task_id" in value
        return value

    def counting_records(data: bytes | str) -> TaskRecord:
        parsed[0] += 1
        return from_json(data)

    monkeypatch.setattr(jsonio, "loads", counting)
    monkeypatch.setattr(TaskRecord, "model_validate_json", counting_records)
    report = action()
    monkeypatch.setattr(jsonio, "loads", loads)
    monkeypatch.setattr(TaskRecord, "model_validate_json", from_json)
    return parsed[0], report


def test_finishing_a_run_parses_each_task_record_once(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = _copy(demo_run, tmp_path)
    stored = sum(1 for _ in iter_results(run_dir.results_file))
    parsed, report = _records_parsed(monkeypatch, lambda: finalize(run_dir, status="complete"))
    assert report.run.tasks_done == stored > 0
    assert parsed == stored  # was 6 × stored: summary, comparison, gaps, resources, checks, report.json's tasks


def test_knowmeter_report_parses_each_task_record_once(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = _copy(demo_run, tmp_path)
    stored = sum(1 for _ in iter_results(run_dir.results_file))
    parsed, report = _records_parsed(monkeypatch, lambda: rebuild_report(run_dir, ReportOverrides(seed=7)))
    assert parsed == stored and report.statistics is not None and report.statistics.config.seed == 7


def test_the_report_s_sections_draw_each_set_of_resamples_once(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison (variant summaries, paired differences) and the resources (cost, latency and
    tokens, differences and relative changes) resample the same samples with one seed: one draw
    serves them all (the resources section drew its own five times)."""
    from knowmeter.stats import _arrays

    chunk_rows, draws = _arrays.chunk_rows, []

    def counting(total_rows: int, k: int) -> Any:
        draws.append((total_rows, k))
        return chunk_rows(total_rows, k)

    monkeypatch.setattr(_arrays, "chunk_rows", counting)  # called once per set of resamples drawn
    report = rebuild_report(_copy(demo_run, tmp_path))
    assert report.statistics is not None and report.resources
    assert len(draws) == len(set(draws)) == 1


def test_the_report_s_sections_draw_each_set_of_resamples_once_when_they_do_not_fit_the_memo(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the memo's size (about 4,800 samples at 48 MB) the count matrices are not kept: every
    section announces what it will resample, and the one draw resamples it all in one pass —
    with the same numbers as a report whose draws all fit."""
    from knowmeter.stats import _arrays

    fitting = _decided(rebuild_report(_copy(demo_run, tmp_path / "fitting")))
    chunk_rows, draws = _arrays.chunk_rows, []

    def counting(total_rows: int, k: int) -> Any:
        draws.append((total_rows, k))
        return chunk_rows(total_rows, k)

    monkeypatch.setattr(_arrays, "chunk_rows", counting)
    monkeypatch.setattr(_arrays.ResampleMemo, "fits", lambda memo, k, b: False)  # no count matrix fits
    report = rebuild_report(_copy(demo_run, tmp_path / "tight"))
    assert report.statistics is not None and report.resources
    assert len(draws) == len(set(draws)) == 1
    assert _decided(report) == fitting


def _decided(report: Report) -> dict[str, Any]:
    data = report.to_dict(tasks=False)
    del data["run"]["reported_at"]
    return data


def test_the_report_does_not_depend_on_the_order_the_tasks_finished_in(demo_run: Path, tmp_path: Path) -> None:
    first = _copy(demo_run, tmp_path / "a")
    second = _copy(demo_run, tmp_path / "b")
    lines = second.results_file.read_bytes().splitlines(keepends=True)
    random.Random(3).shuffle(lines)
    second.results_file.write_bytes(b"".join(lines))
    a, b = rebuild_report(first), rebuild_report(second)
    assert _decided(a) == _decided(b)
    assert [t.task_id for t in a.tasks or []] == [t.task_id for t in b.tasks or []]


def test_report_json_names_the_results_file_instead_of_repeating_every_task(demo_run: Path) -> None:
    stored = json.loads((demo_run / "report.json").read_bytes())
    assert "tasks" not in stored and stored["tasks_file"] == "results.jsonl"
    assert stored["schema_version"] == REPORT_SCHEMA_VERSION == 3
    lines = {r["task_id"]: r for r in iter_results(demo_run / "results.jsonl")}
    joined = joined_report(demo_run)
    assert {k: v for k, v in joined.items() if k != "tasks"} == {
        k: v for k, v in read_report(demo_run / "report.json", demo_run.name).to_dict(tasks=False).items()
    }
    order = [(t["repeat"], t["sample_id"], t["variant"]) for t in joined["tasks"]]
    assert order == sorted(order) and len(order) == len(lines)
    assert joined["tasks"] == [lines[t["task_id"]] for t in joined["tasks"]]  # as stored, nothing added
    view = ReportView(read_report(demo_run / "report.json", demo_run.name))
    assert sum(len(row.tasks) for row in view.samples()) == len(lines)


def test_a_report_json_of_schema_2_with_its_tasks_embedded_is_still_read(demo_run: Path, tmp_path: Path) -> None:
    """A report.json written before the tasks were stored once: its own tasks are read, even
    with the results file gone."""
    older = joined_report(demo_run)
    del older["tasks_file"]
    older["schema_version"] = 2
    older["tasks"].reverse()  # put back in report order on reading
    folder = tmp_path / "old-run"
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps(older))
    report = read_report(folder / "report.json", "old-run")
    assert [t.task_id for t in ReportView(report).tasks()] == [t["task_id"] for t in reversed(older["tasks"])]
    assert report.to_dict()["tasks"] == list(reversed(older["tasks"]))


def test_a_report_json_whose_results_file_is_gone_says_so_when_its_tasks_are_read(
    demo_run: Path, tmp_path: Path
) -> None:
    from knowmeter.errors import InputError

    run_dir = _copy(demo_run, tmp_path)
    run_dir.results_file.unlink()
    report = read_report(run_dir.report_file, run_dir.id)  # the aggregates need no task record
    assert report.variants and report.run.tasks_done > 0
    with pytest.raises(InputError, match=r"results\.jsonl: missing"):
        list(ReportView(report).tasks())


def test_the_page_reads_only_the_rows_it_shows(demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A report built from its run ranked its rows as the report's one pass read the results, so
    the page's detail reads only the tasks of the rows it shows (it read every task again to
    rank the rows: issue 32); a report read back from report.json ranks them in one pass over
    the tasks, and both show the same rows."""
    from knowmeter.report.html._payload import payload

    run_dir = _copy(demo_run, tmp_path)
    report = rebuild_report(run_dir)
    stored, variants = len(report.tasks or []), len(report.variants)
    data: dict[str, Any] = {}

    def shown(shown_from: Report) -> Callable[[], Report]:
        def action() -> Report:
            data.update(payload(ReportView(shown_from), limit=3))
            return shown_from

        return action

    parsed, _ = _records_parsed(monkeypatch, shown(report))
    assert parsed == 3 * variants < stored and data["shown"] == 3 and data["total"] == stored // variants
    built = json.dumps(data, sort_keys=True)
    read_back = read_report(run_dir.report_file, run_dir.id)
    assert read_back.row_index() is None
    _records_parsed(monkeypatch, shown(read_back))
    assert json.dumps(data, sort_keys=True) == built
