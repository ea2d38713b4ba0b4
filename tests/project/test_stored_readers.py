"""What a producer stores is what its readers read (issue 36, mutations A and B: renaming
``RunConfig.max_gap_rate`` or ``Grade.judge_cost_usd`` as an IDE would left mypy clean and the
gate / the judges' spending silently off). Each test goes from the producer through the stored
form to the reader."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowmeter
from knowmeter.api import _stored_spend
from knowmeter.cli._progress import Progress
from knowmeter.dryrun import _task_figures
from knowmeter.grading import Grade
from knowmeter.store import RunDir, TaskRecord
from tests.support.records import task_record


@pytest.mark.slow
def test_each_gap_rate_limit_given_to_the_run_gates_it(tmp_path: Path) -> None:
    """Each limit travels flag → RunConfig → run.json → the gates of the report."""
    (tmp_path / "eval-samples.yaml").write_text("- {sample_id: a, prompt: x}\n- {sample_id: b, prompt: y}\n")
    (tmp_path / "t.md").write_text("# t\n")
    report = knowmeter.evaluate(tmp_path, control="baseline", treatments=["t.md"], max_gap_rate=0.0, seed=1)
    assert report.gates is not None and [r.gate for r in report.gates.results] == ["max_gap_rate"]
    again = knowmeter.evaluate(tmp_path, control="baseline", treatments=["t.md"], gap_rate_regression=0.0, seed=1)
    assert again.gates is not None and [r.gate for r in again.gates.results] == ["gap_rate_regression"]


def test_the_judges_cost_a_grade_stores_is_what_progress_resume_and_dry_run_count(tmp_path: Path) -> None:
    line = task_record(cost=0.5, grade=Grade(judge_cost_usd=0.25)).line()
    record = TaskRecord.model_validate_json(line)  # what a reader of the stored line gets
    progress = Progress(1, 1, None, tty=False)
    progress.tick(record)
    assert progress.cost_known == pytest.approx(0.75)
    assert _task_figures(record) == (0.5, 0.25)
    run_dir = RunDir(tmp_path / "r")
    run_dir.path.mkdir()
    run_dir.results_file.write_bytes(line + b"\n")
    spend = _stored_spend(run_dir, "judge")
    assert spend["judge"].known == 1 and spend["judge"].spent_usd == pytest.approx(0.25)
