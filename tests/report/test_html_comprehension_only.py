"""A comprehension run's page shows comprehension sections only, its cases by id with numbers in
numeric order (issue 33, point 6), at 1280 and 375 px."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, joined_report
from knowmeter.report.html import render_html
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS

pytestmark = pytest.mark.browser


def _numbered(comprehension_run: Path) -> dict[str, Any]:
    """The demo's comprehension report with its case ids renamed 10, 9, 2, 1, … (text order differs)."""
    report: dict[str, Any] = copy.deepcopy(joined_report(comprehension_run))
    cases = report["comprehension"]["cases"]
    new = {c["case_id"]: str(n) for c, n in zip(cases, [10, 9, 2, 1, 11, 3, 4, 5, 6, 7, 8], strict=False)}
    for c in cases:
        c["case_id"] = new[c["case_id"]]
    for t in report["tasks"]:
        t["sample_id"] = new.get(t["sample_id"], t["sample_id"])
    return report


@pytest.mark.parametrize("width", [1280, 375])
def test_comprehension_sections_only_and_numeric_case_order(
    launched_chromium: Any, comprehension_run: Path, tmp_path: Path, width: int
) -> None:
    report = _numbered(comprehension_run)
    ids = sorted((c["case_id"] for c in report["comprehension"]["cases"]), key=int)
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(Report.model_validate(report)))
    browser = Browser(launched_chromium, width=width, mobile=width < 500)
    try:
        page = browser.open(page_file)
        for absent in ("#variants", "#comparisons", "#gaps", "#f-status", "#f-min"):
            assert page.locator(absent).count() == 0, absent
        assert page.locator("nav a").all_inner_texts() == ["Comprehension", "Answers", "Provenance"]
        cases = page.locator("[data-testid=comprehension-cases] tbody tr:not(.casedetail) td:first-child")
        assert cases.all_inner_texts() == ids
        rows = page.locator("#sample-body tr.row")
        shown = [rows.nth(i).get_attribute("data-sample") for i in range(rows.count())]
        assert shown == sorted(shown, key=int)
        assert "unknown" not in page.locator("#sample-body").inner_text()
        page.screenshot(path=str(ARTIFACTS / f"comprehension-only-{width}.png"), full_page=True)
        assert browser.errors == []
    finally:
        browser.browser.close()
