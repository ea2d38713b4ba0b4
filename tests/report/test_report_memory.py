"""What building report.json holds per task (issue 32: 100,000 samples × 2 variants ≤ 200 MB for
the whole eval): each section keeps compact columns and counts, not a task's parsed record or an
object per task per section. Measured with tracemalloc on the demo's real records, copied to
many samples."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any, ClassVar

import pytest

from knowmeter.gold import read_stored_gold
from knowmeter.pipeline import report_sections
from knowmeter.report import build_report
from knowmeter.store import RunDir, RunRecord, iter_results, task_id

SAMPLES = 1500


def _widened(demo_run: Path, tmp_path: Path) -> RunDir:
    """The demo run with its first sample's records stored for ``SAMPLES`` samples, in the order
    a concurrent run finishes them (interleaved, not sorted), their agents showing no gap (a
    task with a gap keeps its signals for the report's inventory)."""
    copy = tmp_path / "store" / "runs" / demo_run.name
    shutil.copytree(demo_run, copy)
    run_dir = RunDir(copy)
    records = list(iter_results(run_dir.results_file))
    first = [r for r in records if r["sample_id"] == records[0]["sample_id"]]
    with run_dir.results_file.open("w") as fh:
        for i in reversed(range(SAMPLES)):
            for rec in first:
                sample = f"m{i:05d}"
                text = json.dumps(rec).replace(json.dumps(rec["sample_id"]), json.dumps(sample))
                copied = {**json.loads(text), "task_id": task_id(sample, rec["variant"], rec["repeat"])}
                copied["analysis"]["gaps"].update(signals=[], retried=[])
                fh.write(json.dumps(copied))
                fh.write("\n")
    run = run_dir.read_run()
    run.tasks_total = SAMPLES * len(first)
    run_dir.write_run(run)
    return run_dir


class _Probe:
    """A section that notes the memory held when the sections' results begin (the fold done)."""

    held: ClassVar[list[int]] = []

    def __init__(self, run: RunRecord) -> None:
        pass

    def add(self, key: tuple[int, str, str], task: object) -> None:
        pass

    def result(self) -> dict[str, Any]:
        self.held.append(tracemalloc.get_traced_memory()[0])
        return {}


@pytest.mark.slow
def test_the_folded_sections_hold_a_few_hundred_bytes_a_task(demo_run: Path, tmp_path: Path) -> None:
    """Measured 456 bytes a task of these records; was 1,180 (each task's parsed gap analysis and
    file-access counts, a resource-use object and a key tuple per task per section)."""
    run_dir = _widened(demo_run, tmp_path)
    sections = [_Probe, *report_sections(run=run_dir.read_run(), gold=read_stored_gold(run_dir.path))]
    build_report(run_dir, sections=sections)  # the modules it imports are not the run's
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        report = build_report(run_dir, sections=sections)
    finally:
        tracemalloc.stop()
    tasks = report.run.tasks_done
    assert tasks == SAMPLES * len(report.variants) * report.run.config.repeat
    held = (_Probe.held[-1] - start) / tasks
    assert held < 600, f"{held:.0f} bytes a task held at the end of the fold"
