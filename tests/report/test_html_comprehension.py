"""report.html of a comprehension run (issue 14): its own section with the verdict, the per-dimension
statistics and every case's graded behaviors — not a JSON dump — and eval-only sections left out."""

from __future__ import annotations

import copy
import html as htmllib
import re
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from knowmeter.report import Report, joined_report
from knowmeter.report.html import render_html

HOSTILE = ('<script>alert("q")</script>', '"><img src=x onerror=alert(1)>', "</details></section><h1>x</h1>")


def _section(page: str) -> str:
    start = page.index('<section id="comprehension">')
    return page[start : page.index("</section>", start)]


def _text(fragment: str) -> str:
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@pytest.mark.slow
def test_comprehend_writes_report_html_with_the_verdict_statistics_and_cases(comprehension_run: Path) -> None:
    report = joined_report(comprehension_run)
    comp = report["comprehension"]
    page = (comprehension_run / "report.html").read_text()
    section = _section(page)
    text = _text(section)
    assert 'data-testid="comprehension-verdict">SHALLOW<' in section
    assert comp["verdict"]["headline"] in text
    assert f"eval_score {comp['verdict']['eval_score']}/5" in text
    assert '<pre class="json">' not in section  # not a dump
    # one row per dimension plus the overall one, with the stored figures
    rows = re.findall(r"<tr[^>]*><td><b>(C\d|all)</b></td>", section)
    assert rows == [*sorted(comp["dimensions"]), "all"]
    overall = comp["overall"]
    low, high = overall["with_skill"]["wilson"]
    assert (
        f"{overall['with_skill']['cases_passed']}/{overall['with_skill']['cases_graded']} [{low:.2f}, {high:.2f}]"
        in text
    )
    assert f"{overall['paired']['mcnemar']['p_value']:.3g}" in text
    # every case, with its verdict in each arm, and each behavior's evidence
    for case in comp["cases"]:
        for grading in case["with_skill"] + case["baseline"]:
            for behavior in grading["behaviors"]:
                assert _text(htmllib.escape(behavior["evidence_quote"])) in text
    assert text.count("PASS") >= sum(g["verdict"] == "PASS" for c in comp["cases"] for g in c["with_skill"])
    assert "verbatim check failed" in text  # the offline agent copies the skill (C1)
    config = report["run"]["config"]  # what every figure depends on
    assert f"{config['repeat']} repeat(s) per case and arm × {config['judge_repeat']} grader call(s) per answer" in text
    # eval-only sections are left out; the exit code is explained for comprehension
    assert 'id="comparisons"' not in page and 'id="gaps"' not in page
    assert "0 = PASS or PROVISIONAL" in page


def test_unknown_figures_read_unknown(comprehension_run: Path) -> None:
    report = joined_report(comprehension_run)
    block = report["comprehension"]["overall"]
    block["paired"]["mde"] = None
    block["paired"]["behavior_fraction_difference"] = None
    report["comprehension"]["verdict"]["eval_score"] = None
    text = _text(_section(render_html(Report.model_validate(report))))
    assert "eval_score unknown" in text
    all_row = text[text.index("all every case") :]
    assert "unknown" in all_row.split("A case passes")[0]


def test_hostile_comprehension_content_is_escaped(comprehension_run: Path) -> None:
    report: dict[str, Any] = copy.deepcopy(joined_report(comprehension_run))
    comp = report["comprehension"]
    comp["skill"]["name"] = HOSTILE[0]
    comp["verdict"]["reasons"].append(HOSTILE[1])
    case = comp["cases"][0]
    case["case_id"] = HOSTILE[2]
    behavior = case["with_skill"][0]["behaviors"][0]
    behavior["evidence_quote"], behavior["rationale"] = HOSTILE[0], HOSTILE[1]
    page = render_html(Report.model_validate(report))
    for payload in HOSTILE:
        assert payload not in page
        assert str(escape(payload)) in page
    assert page.count("<section") == page.count("</section>")


def test_the_page_shows_one_exit_code_the_runs(comprehension_run: Path) -> None:
    """A run the budget stopped exits 1 whatever its verdict: the page shows that code once and
    no second one (the comprehension section showed the verdict's 0 under the header's 1); the
    legend names code 2 (a grader reply that broke the rules twice)."""
    report = joined_report(comprehension_run)
    report["comprehension"]["verdict"].update(level="PROVISIONAL", exit_code=0)
    blocker = {"kind": "incomplete", "message": "14/18 tasks — stopped by the budget"}
    report["decision"].update(outcome="INCOMPLETE", verdict="PROVISIONAL", exit_code=1, blockers=[blocker])
    text = _text(render_html(Report.model_validate(report)))
    assert re.findall(r"exit code (\d)", text) == ["1"]
    assert "2 = a grader reply that broke the rules twice" in text
