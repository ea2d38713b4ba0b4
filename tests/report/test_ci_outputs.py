"""--junit and --markdown: the JUnit XML's structure and content against report.json, the
Markdown summary, $GITHUB_STEP_SUMMARY, and both with hostile content."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from knowmeter.report import joined_report
from tests.report.report_support import HOSTILE
from tests.support.cli import km_process

pytestmark = pytest.mark.slow


def _check_structure(root: ET.Element) -> None:
    """JUnit's shape: testsuites > testsuite > testcase > (failure | error | skipped), counts that add up."""
    assert root.tag == "testsuites"
    for attr in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(attr, "-1")) == sum(int(s.get(attr, "-1")) for s in root)
    for suite in root:
        assert suite.tag == "testsuite" and suite.get("name")
        cases = list(suite)
        assert all(c.tag == "testcase" and c.get("classname") and c.get("name") for c in cases)
        assert int(suite.get("tests", "-1")) == len(cases)
        for kind, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            assert int(suite.get(attr, "-1")) == sum(1 for c in cases if c.find(kind) is not None)
        for c in cases:
            assert {child.tag for child in c} <= {"failure", "error", "skipped"} and len(c) <= 1


def _run_report(run: Path, tmp: Path, *extra: str) -> tuple[ET.Element, str, str]:
    env_summary = tmp / "step-summary.md"
    env_summary.write_text("earlier step\n")
    r = km_process(
        "report",
        str(run),
        "--junit",
        str(tmp / "j.xml"),
        "--markdown",
        str(tmp / "s.md"),
        "--report-only",
        *extra,
        cwd=tmp,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(env_summary)},
    )
    assert r.returncode == 0, r.stderr
    return ET.parse(tmp / "j.xml").getroot(), (tmp / "s.md").read_text(), env_summary.read_text()


def test_junit_has_a_case_per_task_and_one_for_the_outcome(demo_run: Path, tmp_path: Path) -> None:
    root, summary, step = _run_report(demo_run, tmp_path)
    _check_structure(root)
    report: dict[str, Any] = joined_report(demo_run)
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert len(cases) == len(report["tasks"]) + 1
    for t in report["tasks"]:
        case = cases[(f"knowmeter.{t['variant']}", t["sample_id"])]
        failed = [a["message"] for a in t["grade"]["assertions"] if a["passed"] is False]
        failure = case.find("failure")
        if failed:
            assert failure is not None and failure.text is not None
            assert [line.split("]: ", 1)[1] for line in failure.text.splitlines()] == failed
        else:
            assert failure is None
    outcome = cases[("knowmeter.outcome", f"outcome {report['decision']['outcome']}")]
    assert (outcome.find("failure") is None) == (report["exit_code"] == 0)
    assert summary.startswith(f"## knowmeter: **{report['decision']['outcome']}**")
    assert step == "earlier step\n" + summary + "\n"


def test_a_failing_outcome_is_a_failed_test_case(demo_run: Path, tmp_path: Path) -> None:
    try:
        root, summary, _ = _run_report(demo_run, tmp_path, "--threshold", "5")
        report = joined_report(demo_run)  # as rewritten with the override
    finally:
        km_process("report", str(demo_run), "--report-only", cwd=tmp_path)  # the stored report's own settings again
    _check_structure(root)
    assert report["exit_code"] != 0
    outcome = next(c for c in root.iter("testcase") if c.get("classname") == "knowmeter.outcome")
    failure = outcome.find("failure")
    assert failure is not None and failure.get("message") == report["decision"]["headline"][:500]
    assert report["decision"]["outcome"] in summary
    for line in ("| variant | role | composite", "### Knowledge gaps and coverage", report["run"]["watermark"]["id"]):
        assert line.replace("_", "\\_") in summary


def test_eval_writes_both_and_hostile_text_stays_text(hostile_run: Path) -> None:
    out = hostile_run.parents[2] / "out"
    root = ET.parse(out / "junit.xml").getroot()
    _check_structure(root)
    messages = "\n".join(f.text or "" for f in root.iter("failure"))
    assert HOSTILE[0] in messages and HOSTILE[3] in messages  # not_contains messages quote the payloads
    names = {c.get("name") for c in root.iter("testcase")}
    assert {t["sample_id"] for t in joined_report(hostile_run)["tasks"]} < names
    summary = (out / "summary.md").read_text()
    assert "<" not in summary and "knowmeter:" in summary
