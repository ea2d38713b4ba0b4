"""The viewer's compare page lists the samples that changed outcome between two runs, with both
outputs side by side (issue 33, point 4)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, ReportView, joined_report
from knowmeter.viewer._changes import changes
from knowmeter.viewer._pages import compare_page
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS


@pytest.fixture()
def two_runs(demo_run: Path) -> tuple[Report, Report, dict[str, Any]]:
    """The demo's report and a copy in which the first task passes where it failed (or the other
    way round), with a hostile output, and the last task is missing."""
    a = joined_report(demo_run)
    b = copy.deepcopy(a)
    first = b["tasks"][0]
    first["grade"]["passed"] = not first["grade"]["passed"]
    first["exec"]["output"] = "<script>window.__pwned = 1</script> changed answer"
    b["tasks"].pop()
    return Report.model_validate(a), Report.model_validate(b), a


def test_changes_are_the_tasks_whose_outcome_differs(two_runs: tuple[Report, Report, dict[str, Any]]) -> None:
    a, b, raw = two_runs
    listed, total = changes(ReportView(a), ReportView(b))
    first, last = raw["tasks"][0], raw["tasks"][-1]
    assert total == 2
    keys = {(c.sample_id, c.variant, c.repeat): c for c in listed}
    flipped = keys[(first["sample_id"], first["variant"], first["repeat"])]
    assert flipped.a is not None and flipped.b is not None and flipped.a.outcome != flipped.b.outcome
    assert flipped.b.output.endswith("changed answer")
    gone = keys[(last["sample_id"], last["variant"], last["repeat"])]
    assert gone.a is not None and gone.b is None
    assert changes(ReportView(a), ReportView(a)) == ([], 0)


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 375])
def test_the_compare_page_shows_changed_samples_side_by_side(
    launched_chromium: Any, two_runs: tuple[Report, Report, dict[str, Any]], tmp_path: Path, width: int
) -> None:
    a, b, _ = two_runs
    page_file = tmp_path / "compare.html"
    page_file.write_text(compare_page(("run-a", a), ("run-b", b)))
    browser = Browser(launched_chromium, width=width, mobile=width < 500)
    try:
        page = browser.open(page_file, scripted=False)
        assert page.get_by_test_id("changed-count").inner_text().startswith("2 sample × variant × repeat tasks")
        assert page.locator("tr.changed-row").count() == 2
        page.locator("#changed summary").first.click()
        outputs = page.locator("#changed details[open]").first.get_by_test_id("output")
        assert outputs.count() == 2
        assert "<script>window.__pwned = 1</script> changed answer" in outputs.all_inner_texts()
        assert page.evaluate("window.__pwned") is None
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(ARTIFACTS / f"viewer-compare-{width}.png"), full_page=True)
        assert browser.errors == []
    finally:
        browser.browser.close()
