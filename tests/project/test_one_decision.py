"""Issue 36 point 4: one decision. The verdict, the CI gates, an incomplete or unmeasured run and
the exit code are decided once (``knowmeter.decision``: ``settle`` writes a report's ``gates`` and
``decision``, ``command_exit_code`` picks every command's exit code), and every output reads that
one object: the terminal's first and last lines, Markdown, HTML, JUnit, report.json, the run
index (``knowmeter runs``) and the CI exit code.

The table starts from the demo's real report (PROGRESS, complete, no gate) and changes one input
at a time; each row checks the decision and then that every output shows it."""

from __future__ import annotations

import io
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from knowmeter.compare import VerdictLevel
from knowmeter.decision import command_exit_code, settle
from knowmeter.exit_codes import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_NOT_PASSED, EXIT_OK, EXIT_TERMINATED
from knowmeter.report import Blocker, Decision, Report, render_terminal
from knowmeter.runner import RunStopped
from tests.support.outcome import assert_outputs_show

Change = Callable[[Report], Report]


@pytest.fixture(scope="module")
def base(demo_report: dict[str, Any]) -> Report:
    """The demo run's report as read back: PROGRESS, complete, no gate configured."""
    report = Report.model_validate(demo_report)
    assert report.decision is not None and report.decision.outcome == "PROGRESS" and report.run.complete
    return report


def _run(**update: Any) -> Change:
    return lambda r: r.model_copy(update={"run": r.run.model_copy(update=update)})


def _verdict(level: str, exit_code: int) -> Change:
    """The comparison's verdict at ``level``, with its own exit code (0: it passes by itself)."""

    def change(r: Report) -> Report:
        assert r.verdict is not None
        verdict = r.verdict.model_copy(update={"level": VerdictLevel(level), "exit_code": exit_code})
        return r.model_copy(update={"verdict": verdict})

    return change


def _halted(r: Report) -> Report:
    return _run(status="halted", tasks_done=r.run.tasks_done - 4)(r)


def _budget_stopped(r: Report) -> Report:
    assert r.run.budget is not None
    budget = r.run.budget.model_copy(update={"tasks_not_started_for_budget": 4})
    return _run(status="incomplete", tasks_done=r.run.tasks_done - 4, budget=budget)(r)


def _errored(r: Report) -> Report:
    return r.model_copy(update={"variants": [v.model_copy(update={"errors": v.tasks}) for v in r.variants]})


def _judge_never_scored(r: Report) -> Report:
    from knowmeter.store import JudgeInfo

    variants = [
        v.model_copy(update={"judging": v.judging.model_copy(update={"judged": 0, "failed": v.tasks})})
        for v in r.variants
    ]
    judges = [JudgeInfo(name="j", executor="script", model=None)]
    return _run(judges=judges)(r).model_copy(update={"variants": variants})


def _gate(limit: float) -> Change:
    """``--max-gap-rate limit`` on the run (settle evaluates it on the treatment's gap rate)."""
    return lambda r: _run(config=r.run.config.model_copy(update={"max_gap_rate": limit}))(r)


def _subset(r: Report) -> Report:
    from knowmeter.store import SubsetInfo

    return _run(subset=SubsetInfo(samples=3, of=r.run.watermark.count, sample_ids=[], limit=3))(r)


#: why each incomplete row is incomplete (Decision.incomplete); the other rows are complete
INCOMPLETE = {
    "halted": "halted",
    "interrupted": "interrupted",
    "killed": "killed",
    "budget stopped": "budget",
    "records unreadable": "records_missing",
    "errored and halted": "halted",
    "incomplete before gate": "halted",
}

# (name, change, outcome, verdict kept, exit code, blocker kinds in order)
TABLE: list[tuple[str, Change, str, str | None, int, list[str]]] = [
    ("progress", lambda r: r, "PROGRESS", "PROGRESS", EXIT_OK, []),
    ("noise", _verdict("NOISE", 1), "NOISE", "NOISE", EXIT_NOT_PASSED, []),
    ("cautious", _verdict("CAUTIOUS", 1), "CAUTIOUS", "CAUTIOUS", EXIT_NOT_PASSED, []),
    ("regress", _verdict("REGRESS", 1), "REGRESS", "REGRESS", EXIT_NOT_PASSED, []),
    ("underpowered", _verdict("UNDERPOWERED", 1), "UNDERPOWERED", "UNDERPOWERED", EXIT_NOT_PASSED, []),
    ("solo passing", _verdict("SOLO", 0), "SOLO", "SOLO", EXIT_OK, []),
    ("solo failing", _verdict("SOLO", 1), "SOLO", "SOLO", EXIT_NOT_PASSED, []),
    ("halted", _halted, "INCOMPLETE", "PROGRESS", EXIT_NOT_PASSED, ["incomplete"]),
    ("interrupted", _run(status="interrupted"), "INCOMPLETE", "PROGRESS", EXIT_NOT_PASSED, ["incomplete"]),
    ("killed", _run(status="running"), "INCOMPLETE", "PROGRESS", EXIT_NOT_PASSED, ["incomplete"]),
    ("budget stopped", _budget_stopped, "INCOMPLETE", "PROGRESS", EXIT_NOT_PASSED, ["incomplete"]),
    (
        "records unreadable",
        lambda r: _run(tasks_done=r.run.tasks_total - 1)(r),
        "INCOMPLETE",
        "PROGRESS",
        EXIT_NOT_PASSED,
        ["incomplete"],
    ),
    ("subset (complete)", _subset, "PROGRESS", "PROGRESS", EXIT_OK, []),
    ("most tasks errored", _errored, "NOT MEASURED", None, EXIT_NOT_PASSED, ["not_measured"]),
    (
        "errored and halted",
        lambda r: _halted(_errored(r)),
        "NOT MEASURED",
        None,
        EXIT_NOT_PASSED,
        ["not_measured", "incomplete"],
    ),
    ("judge never scored", _judge_never_scored, "JUDGE FAILED", "PROGRESS", EXIT_NOT_PASSED, ["judge_failed"]),
    ("gate failed", _gate(0.0), "GATE FAILED", "PROGRESS", EXIT_NOT_PASSED, ["gate_failed"]),
    ("gate passed", _gate(1.0), "PROGRESS", "PROGRESS", EXIT_OK, []),
    ("gate failed on noise", lambda r: _gate(0.0)(_verdict("NOISE", 1)(r)), "GATE FAILED", "NOISE", 1, ["gate_failed"]),
    (
        "incomplete before gate",
        lambda r: _gate(0.0)(_halted(r)),
        "INCOMPLETE",
        "PROGRESS",
        EXIT_NOT_PASSED,
        ["incomplete", "gate_failed"],
    ),
]


def assert_every_output_reads(report: Report, decision: Decision, folder: Path) -> None:
    """Every written output and the exit code show ``decision``, and so do the terminal's first
    and last lines."""
    assert_outputs_show(report, decision, folder)
    console = Console(file=io.StringIO(), width=100, color_system=None)
    render_terminal(report, console)
    lines = [line for line in console.file.getvalue().splitlines() if line.strip()]  # type: ignore[attr-defined]
    assert " ".join(lines[0].split()).startswith(" ".join(decision.headline.split())[:60]), lines[0]
    assert " ".join(lines[-1].split()) in " ".join(decision.recommendation.split())


def _settled(base: Report, change: Change) -> tuple[Report, Decision]:
    report = change(base.model_copy(deep=True))
    return report, settle(report, {})


@pytest.mark.parametrize(("name", "change", "outcome", "verdict", "code", "kinds"), TABLE, ids=[t[0] for t in TABLE])
def test_one_decision_from_its_inputs(
    base: Report,
    name: str,
    change: Change,
    outcome: str,
    verdict: str | None,
    code: int,
    kinds: list[str],
) -> None:
    report, decision = _settled(base, change)
    assert (decision.outcome, decision.verdict, decision.exit_code) == (outcome, verdict, code), decision.headline
    assert [b.kind for b in decision.blockers] == kinds
    assert decision.incomplete == INCOMPLETE.get(name) and report.run.complete == (name not in INCOMPLETE)
    if decision.incomplete == "budget":  # a larger total, not a plain resume, finishes it
        assert "--budget-usd TOTAL" in decision.recommendation
    assert decision.passed == (code == EXIT_OK) and report.exit_code == code
    assert report.gates is not None and report.gates.passed == ("gate_failed" not in kinds)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "change"), [t[:2] for t in TABLE], ids=[t[0] for t in TABLE])
def test_every_output_reads_the_decision(base: Report, tmp_path: Path, name: str, change: Change) -> None:
    report, decision = _settled(base, change)
    assert_every_output_reads(report, decision, tmp_path / "out")


@pytest.mark.slow
def test_no_output_decides_again_from_the_verdict(base: Report, tmp_path: Path) -> None:
    """A decision that disagrees with the verdict (PROGRESS, the verdict's own exit code 0) and
    the gates (none failed): every output follows the decision. The old report.json kept its
    own ``exit_code`` beside the decision's, set by a second hand."""
    report = base.model_copy(deep=True)
    settle(report, {})
    sentinel = Decision(
        outcome="GATE FAILED",
        verdict="PROGRESS",
        exit_code=EXIT_NOT_PASSED,
        headline="GATE FAILED · the sentinel decision (verdict on what was measured: PROGRESS)",
        recommendation="DO NOT SHIP — a gate failed: the sentinel decision.",
        blockers=[Blocker(kind="gate_failed", message="the sentinel decision")],
    )
    report.decision = sentinel
    assert report.verdict is not None and report.verdict.exit_code == EXIT_OK
    assert_every_output_reads(report, sentinel, tmp_path / "out")
    assert command_exit_code(report.decision, report_only=True) == EXIT_OK


@pytest.mark.parametrize(
    ("decided", "report_only", "signum", "code"),
    [
        (EXIT_OK, False, None, EXIT_OK),
        (EXIT_NOT_PASSED, False, None, EXIT_NOT_PASSED),
        (EXIT_INPUT, False, None, EXIT_INPUT),  # a comprehension verdict on broken grader replies
        (EXIT_NOT_PASSED, True, None, EXIT_OK),
        (EXIT_INPUT, True, None, EXIT_OK),
        (None, False, None, EXIT_NOT_PASSED),  # never decided: does not pass
        (EXIT_OK, False, signal.SIGINT, EXIT_INTERRUPTED),
        (EXIT_OK, True, signal.SIGINT, EXIT_INTERRUPTED),  # --report-only never hides a Ctrl-C
        (EXIT_NOT_PASSED, True, signal.SIGTERM, EXIT_TERMINATED),
    ],
)
def test_the_command_exit_code_table(decided: int | None, report_only: bool, signum: int | None, code: int) -> None:
    decision = (
        None
        if decided is None
        else Decision(outcome="NOISE", verdict="NOISE", exit_code=decided, headline="h", recommendation="r")
    )
    stop = None if signum is None else RunStopped(signum)  # what RunInterrupted carries: the signal
    assert command_exit_code(decision, report_only=report_only, stop=stop) == code


@pytest.mark.slow
def test_the_regression_gate_is_settled_against_the_previous_run_given(base: Report, tmp_path: Path) -> None:
    """``--gap-rate-regression`` compares each gated variant with its previous run (what the
    pipeline read from the index): ``settle`` gates and decides in one step."""
    report = _run(config=base.run.config.model_copy(update={"gap_rate_regression": 0.0}))(base.model_copy(deep=True))
    settle(report, {})
    assert report.decision is not None and report.decision.outcome == "PROGRESS"
    assert report.gates is not None and report.gates.passed and report.gates.results
    treatment = report.gated_variants()[0]
    decision = settle(report, {treatment: ("r0", 0.0)})
    assert decision.outcome == "GATE FAILED" and decision.exit_code == EXIT_NOT_PASSED
    assert report.gates is not None and not report.gates.passed and "since run r0" in decision.blockers[0].message
    assert_every_output_reads(report, decision, tmp_path / "out")
