"""Issue 36 point 4 for a comprehension run: its summary, report.json, Markdown, HTML, JUnit, the
run index and the exit code all show the run's one decision, not the skill verdict's own."""

from __future__ import annotations

from pathlib import Path

from knowmeter.comprehension import summary_lines
from knowmeter.exit_codes import EXIT_NOT_PASSED, EXIT_OK
from knowmeter.report import Blocker, Decision, read_report
from tests.support.outcome import assert_outputs_show


def test_every_output_of_a_comprehension_run_reads_its_decision(comprehension_run: Path, tmp_path: Path) -> None:
    report = read_report(comprehension_run / "report.json", comprehension_run.name)
    assert report.decision is not None and report.comprehension is not None
    assert report.decision.outcome == report.comprehension.verdict.level == "SHALLOW"  # nothing blocks: the verdict's
    assert_outputs_show(report, report.decision, tmp_path / "as-run")
    # a decision that disagrees with the skill verdict (its own code 0): every output follows the decision
    report.comprehension.verdict = report.comprehension.verdict.model_copy(
        update={"level": "PROVISIONAL", "exit_code": EXIT_OK}
    )
    sentinel = Decision(
        outcome="INCOMPLETE",
        verdict="PROVISIONAL",
        exit_code=EXIT_NOT_PASSED,
        headline="INCOMPLETE · 14/18 tasks — the sentinel decision (verdict on what was measured: PROVISIONAL)",
        recommendation="NOT DECIDED — the sentinel decision's recommendation.",
        blockers=[Blocker(kind="incomplete", message="14/18 tasks — the sentinel decision")],
        incomplete="budget",
    )
    report.decision = sentinel
    assert_outputs_show(report, sentinel, tmp_path / "sentinel")
    lines = summary_lines(report)
    assert f"outcome: {sentinel.headline} · exit code {EXIT_NOT_PASSED}" in lines
    assert lines[-1] == f"recommendation: {sentinel.recommendation}"
