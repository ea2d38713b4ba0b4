"""JUnit XML for CI: one test case per sample × variant (× repeat) whose failure message lists
the failed assertions — a comprehension run's, the failed behaviors of the graded answer, an
ungraded one skipped — (an execution error is an ``<error>``), and one test case for the run's
outcome (failed unless the decision passes, i.e. exit code 0) whose ``<system-out>`` holds the
decision's ⚠ warnings."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from knowmeter.report._model import ComprehensionGrading, Report
from knowmeter.report._view import ReportView, TaskView

#: characters XML 1.0 cannot hold at all (agent output may contain them)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _graded(case: ET.Element, grading: ComprehensionGrading) -> str:
    """A comprehension answer's case: its graded verdict (an ungraded answer is skipped)."""
    if not grading.graded:
        ET.SubElement(case, "skipped", message=_x(f"ungraded: {grading.ungraded_reason}"[:500]))
        return "skipped"
    if grading.verdict == "PASS":
        return "passed"
    failed = [b for b in grading.behaviors if b.verdict != "PASS"]
    lines = [f"{b.id}: {b.override or b.rationale or ''}" for b in failed]
    ET.SubElement(
        case,
        "failure",
        message=_x(f"{len(failed)} behavior(s) failed: {lines[0] if lines else ''}"[:500]),
        type="comprehension",
    ).text = _x("\n".join(lines))
    return "failure"


def _case(suite: ET.Element, task: TaskView, repeats: bool, grading: ComprehensionGrading | None) -> str:
    """Add the task's test case; returns "failure", "error", "skipped" or "passed"."""
    name = f"{task.sample_id} [repeat {task.repeat}]" if repeats else task.sample_id
    case = ET.SubElement(suite, "testcase", classname=_x(f"knowmeter.{task.variant}"), name=_x(name))
    if task.latency_ms is not None:
        case.set("time", f"{task.latency_ms / 1000:.3f}")
    if task.error:
        ET.SubElement(case, "error", message=_x(task.error[:500]), type="execution").text = _x(task.error)
        return "error"
    if grading is not None:
        return _graded(case, grading)
    failed = task.failed_assertions
    if failed:
        lines = [f"{a.get('type', '?')} [{a.get('layer', '?')}]: {a.get('message', '')}" for a in failed]
        ET.SubElement(
            case, "failure", message=_x(f"{len(failed)} assertion(s) failed: {lines[0]}"[:500]), type="assertion"
        ).text = _x("\n".join(lines))
        return "failure"
    if task.passed is None:
        ET.SubElement(case, "skipped", message="no assertion could be decided")
        return "skipped"
    return "passed"


def junit_xml(report: Report) -> str:
    """The report as a JUnit XML document (one suite per variant plus one for the outcome)."""
    view = ReportView(report)
    repeats = any(t.repeat for t in view.tasks())  # the tasks are read again per pass, never all held
    root = ET.Element("testsuites", name=_x(f"knowmeter run {view.run_id}"))
    arm = {v.name: "baseline" if v.role == "control" else "with_skill" for v in view.variants}
    comp = report.comprehension  # a comprehension run: each answer's graded verdict, not assertions
    gradings = {
        (side, c.case_id, g.repeat): g
        for c in (comp.cases if comp else [])
        for side in ("baseline", "with_skill")
        for g in getattr(c, side)
    }
    for name in [v.name for v in view.variants]:
        suite = ET.SubElement(root, "testsuite", name=_x(f"knowmeter.{name}"))
        counts = {"failure": 0, "error": 0, "skipped": 0, "passed": 0}
        for task in view.tasks():
            if task.variant == name:
                grading = gradings.get((arm[name], task.sample_id, task.repeat))
                counts[_case(suite, task, repeats, grading)] += 1
        suite.set("tests", str(sum(counts.values())))
        suite.set("failures", str(counts["failure"]))
        suite.set("errors", str(counts["error"]))
        suite.set("skipped", str(counts["skipped"]))
    outcome = view.outcome
    suite = ET.SubElement(root, "testsuite", name="knowmeter.outcome", tests="1", errors="0", skipped="0")
    case = ET.SubElement(
        suite,
        "testcase",
        classname="knowmeter.outcome",
        name=_x(f"outcome {outcome.outcome if outcome else 'unknown'}"),
    )
    passed = outcome is not None and outcome.exit_code == 0
    suite.set("failures", "0" if passed else "1")
    if not passed:
        text = (
            "\n".join([outcome.headline, outcome.recommendation, *(m for _, m in outcome.blockers)])
            if outcome
            else "the report has no decision"
        )
        ET.SubElement(
            case, "failure", message=_x(outcome.headline[:500] if outcome else "no decision"), type="outcome"
        ).text = _x(text)
    if outcome is not None and outcome.warnings:  # shown whatever the outcome (a budget exceeded, …)
        ET.SubElement(case, "system-out").text = _x("\n".join(f"⚠ {w}" for w in outcome.warnings))
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
