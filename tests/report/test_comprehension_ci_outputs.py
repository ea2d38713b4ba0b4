"""``knowmeter report --markdown / --junit`` of a comprehension run show its own figures: the
per-dimension table and verdict (not an empty composite table and a bare ``****``), and each
answer's graded verdict (not 'no assertion could be decided' on every case)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from knowmeter.report import Report, joined_report
from knowmeter.report._junit import junit_xml
from knowmeter.report._markdown import markdown_summary


def _report(run: Path) -> tuple[dict[str, Any], Report]:
    data = joined_report(run)
    return data, Report.model_validate(data)


def test_markdown_shows_the_dimensions_and_the_verdict(comprehension_run: Path) -> None:
    data, report = _report(comprehension_run)
    comp, verdict = data["comprehension"], data["comprehension"]["verdict"]
    text = markdown_summary(report)
    assert "****" not in text and "composite" not in text
    for dim, block in [*comp["dimensions"].items(), ("all", comp["overall"])]:
        arm = block["with_skill"]
        low, high = arm["wilson"]
        assert f"| {dim} | " in text and f"{arm['cases_passed']}/{arm['cases_graded']} [{low:.2f}, {high:.2f}]" in text
    assert f"verdict **{verdict['level']}** — " in text
    assert f"eval\\_score {verdict['eval_score']}/5" in text
    assert f"failing {', '.join(verdict['failing_dimensions'])}" in text


def test_junit_carries_each_graded_answer(comprehension_run: Path) -> None:
    data, report = _report(comprehension_run)
    root = ET.fromstring(junit_xml(report))
    arm = {"baseline": "baseline", "with-skill": "with_skill"}
    expected = {
        (variant, case["case_id"]): grading
        for case in data["comprehension"]["cases"]
        for variant, side in arm.items()
        for grading in case[side]
    }
    seen = 0
    for suite in root:
        variant = suite.get("name", "").removeprefix("knowmeter.")
        if variant not in arm:
            continue
        for case in suite:
            grading = expected[(variant, case.get("name"))]
            failure = case.find("failure")
            assert case.find("skipped") is None  # every answer of the demo was graded
            if grading["verdict"] == "PASS":
                assert failure is None
            else:
                failed = [b["id"] for b in grading["behaviors"] if b["verdict"] != "PASS"]
                assert failure is not None and failure.get("type") == "comprehension"
                assert [line.split(":")[0] for line in (failure.text or "").splitlines()] == failed
            seen += 1
    assert seen == len(expected)
    fails = sum(g["verdict"] == "FAIL" for g in expected.values())
    assert root.get("failures") == str(fails + 1)  # and the outcome's (SHALLOW)
