"""The report's first screen in plain words (issue 33, point 7): what changed, whether it is
larger than chance, what to do and the forest plot, with the statistics one click below."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.report import joined_report
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 375])
def test_demo_first_screen_says_what_changed_and_what_to_do(
    launched_chromium: object, demo_run: Path, width: int
) -> None:
    report = joined_report(demo_run)
    stats = report["statistics"]
    control, treatment = stats["control"], stats["treatments"][0]
    rate = {name: stats["variants"][name]["pass_rate"] for name in (control, treatment)}
    browser = Browser(launched_chromium, width=width, mobile=width < 500)
    try:
        page = browser.open(demo_run / "report.html")
        page.screenshot(path=str(ARTIFACTS / f"report-first-screen-{width}.png"))
        summary = page.get_by_test_id("plain-summary")
        expected = (
            f"The treatment {treatment} answered {rate[treatment]['passed']} of {rate[treatment]['n']} samples "
            f"correctly vs {rate[control]['passed']} of {rate[control]['n']} for the control {control}; "
            "the difference is larger than chance."
        )
        assert summary.inner_text() == expected
        todo = page.get_by_test_id("what-to-do")
        assert report["decision"]["recommendation"] in todo.inner_text()
        forest = page.get_by_test_id("first-forest")
        # all of it on the first screen, in this order
        boxes = [summary.bounding_box(), todo.bounding_box(), forest.bounding_box()]
        assert all(b is not None and b["y"] + b["height"] <= 900 for b in boxes), boxes
        assert [b["y"] for b in boxes] == sorted(b["y"] for b in boxes)
        # the statistics are one click below, not removed
        detail = page.get_by_test_id("stat-detail")
        rationale = detail.locator("ul.rationale li")
        assert rationale.count() == len(report["verdict"]["rationale"])
        assert not rationale.first.is_visible()
        detail.locator("summary").click()
        assert rationale.first.is_visible()
        assert "d_z" in detail.inner_text()
        assert browser.errors == []
    finally:
        browser.browser.close()
