"""report.html without a browser, the review's findings: bidi controls in untrusted text shown as
their code, the budget table in dollars with unset limits said so, the reason a run has no paired
comparison, and unknown token counts shown as unknown."""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, joined_report
from knowmeter.report.html import Series, line_chart, render_html
from knowmeter.report.html._page import TEMPLATES
from knowmeter.report.html._text import HIDDEN
from tests.report.report_support import latest_run
from tests.report.test_html_static import Page
from tests.support.cli import km_process


def _render(report: dict[str, Any]) -> tuple[Page, str]:
    page = Page(render_html(Report.model_validate(report)))
    return page, " ".join(" ".join(page.text).split())


def test_bidi_controls_in_the_template_text_are_shown_as_their_code(review_run: Path) -> None:
    report = joined_report(review_run)
    signal = report["gaps"]["variants"][0]["signals"][0]
    for task in report["tasks"]:  # the row renamed with it: the inventory lists the rows the page holds
        if task["sample_id"] == signal["sample_id"]:
            task["sample_id"] = "gap\u202e-1"
    signal["sample_id"], signal["context"] = "gap\u202e-1", "Grep \u2066x\u2069 \u200f"
    page, text = _render(report)
    assert "gap\u27e8U+202E\u27e9-1" in text and "Grep \u27e8U+2066\u27e9x\u27e8U+2069\u27e9 \u27e8U+200F\u27e9" in text
    assert not HIDDEN.search(" ".join(page.text))
    link = next(a for t, a in page.tags if t == "a" and "samplelink" in (a.get("class") or ""))
    assert link["href"] == "#sample=gap%E2%80%AE-1&repeat=1"  # the link keeps the real id


def test_bidi_controls_in_chart_labels_are_shown_as_their_code() -> None:
    chart = line_chart(
        [Series("treat\u202e", [("run \u2067", 1.0), ("b", 2.0)])], title="t\u200e", y_label="y", x_label="x"
    )
    assert not HIDDEN.search(chart)
    assert "treat\u27e8U+202E\u27e9" in chart and "run \u27e8U+2067\u27e9" in chart and "t\u27e8U+200E\u27e9" in chart


def test_a_chart_legend_has_one_line_per_series_inside_the_chart() -> None:
    """Long series names (a layer set in the name) never overlap: one legend line each."""
    names = [f"support-{v} (fact+behavior{j})" for v in ("basic", "expert") for j in ("", "+judge")]
    chart = line_chart([Series(n, [("a", 1.0), ("b", 2.0)]) for n in names], title="t", y_label="y", x_label="x")
    height = float(re.search(r'height="([0-9.]+)"', chart).group(1))  # type: ignore[union-attr]
    legend = re.findall(r'<text class="legend s\d" x="([0-9.]+)" y="([0-9.]+)">', chart)
    assert len({x for x, _ in legend}) == 1 and len({y for _, y in legend}) == len(names)
    assert all(float(y) <= height for _, y in legend)


def test_the_page_script_shows_the_same_characters() -> None:
    script = (TEMPLATES / "detail.js").read_text(encoding="utf-8")  # the pages' shared detail component
    found = re.search(r"var HIDDEN = /(\[[^\]]+\])/g;", script)
    assert found is not None
    assert codecs.decode(found.group(1), "unicode_escape") == HIDDEN.pattern


@pytest.fixture(scope="module")
def budget_stopped(review_project: Path) -> tuple[dict[str, Any], Page, str]:
    """The review project run under a budget smaller than one task: only the control's first task ran."""
    r = km_process("eval", "-q", "--budget-usd", "0.0001", cwd=review_project)
    assert r.returncode == 1 and "INCOMPLETE · 1/16 tasks" in r.stdout, r.stdout + r.stderr
    run = latest_run(review_project)
    page = Page((run / "report.html").read_text())  # as eval wrote it
    return joined_report(run), page, " ".join(" ".join(page.text).split())


def test_a_run_without_a_finished_treatment_says_why_it_has_no_comparison(
    budget_stopped: tuple[dict[str, Any], Page, str],
) -> None:
    report, _, text = budget_stopped
    assert report["comparisons"] == [] and len(report["variants"]) == 2
    assert "No paired comparison: treat has no finished task (run incomplete: 1/16 tasks)." in text
    assert "SOLO run" not in text


def test_the_budget_table_in_dollars_with_unset_limits_said_so(
    budget_stopped: tuple[dict[str, Any], Page, str],
) -> None:
    report, _, text = budget_stopped
    budget = report["run"]["budget"]
    assert (budget["total_usd"], budget["per_task_usd"], budget["spent_known_usd"]) == (0.0001, None, 0.002)
    budget_text = text[text.index("Budget total limit") : text.index("Configuration")]
    assert budget_text == (
        "Budget total limit $0.0001 per-task limit not set spent (known costs) $0.0020 tasks with a known cost 1"
        " tasks with an unknown cost 0 tasks not started for the budget 15"
        " agent calls 1 with a known cost ($0.0020), 0 with an unknown cost overshoot $0.0019"
        f" note {budget['note']} "
    )


def test_no_note_and_no_limit_are_not_unknown(review_run: Path) -> None:
    _, text = _render(joined_report(review_run))
    budget_text = text[text.index("Budget total limit") : text.index("Configuration")]
    assert budget_text == (
        "Budget total limit not set per-task limit not set spent (known costs) $0.0320 tasks with a known cost 16"
        " tasks with an unknown cost 0 tasks not started for the budget 0"
        " agent calls 16 with a known cost ($0.0320), 0 with an unknown cost overshoot none "
    )


def test_tokens_no_task_reported_are_unknown_not_zero(budget_stopped: tuple[dict[str, Any], Page, str]) -> None:
    report, page, _ = budget_stopped
    assert [v["tokens"] for v in report["variants"]] == [
        {"input": 0, "output": 0, "tasks_with_unknown_usage": 1},
        {"input": 0, "output": 0, "tasks_with_unknown_usage": 0},
    ]
    text = " ".join(page.text)
    assert "0 / 0" not in text
