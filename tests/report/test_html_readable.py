"""Readable at any size (issue 33, point 8): charts with labelled axes and visible equal series,
no "-0.0%", viewer pages with an h1, colours meeting WCAG AA contrast, phone nav and no sideways
overflow at 1280 px with 200-character names."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, joined_report
from knowmeter.report.html import Series, line_chart, render_html
from knowmeter.report.html._page import TEMPLATES, pct
from knowmeter.report.html._svg import ForestRow, forest_plot
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS


def test_no_negative_zero() -> None:
    assert pct(-0.00001) == "0.0%" and pct(-0.0004) == "0.0%" and pct(-0.001) == "-0.1%"
    chart = forest_plot([ForestRow("composite", -0.001, -0.004, 0.5, False)], min_effect=None, title="t")
    assert "-0.00" not in chart and "Δ +0.00 [+0.00, +0.50]" in chart


def test_charts_label_both_axes_and_equal_series_differ() -> None:
    chart = line_chart(
        [Series(n, [("run 1", 0.5), ("run 2", 0.5)]) for n in ("gap rate", "coverage")],
        title="t",
        y_label="share",
        x_label="run",
    )
    assert '<text class="axis"' in chart and ">share</text>" in chart and ">run</text>" in chart
    assert ">run 1</text>" in chart and ">run 2</text>" in chart
    lines = re.findall(r'<polyline class="line ([^"]+)"', chart)
    assert len(set(lines)) == 2  # its own colour and dash each: the second line shows over the first
    forest = forest_plot([ForestRow("composite", 1.0, 0.5, 1.5, True)], min_effect=0.2, title="t")
    assert "Δ = treatment − control" in forest


def _luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_text_colours_meet_wcag_aa() -> None:
    css = (TEMPLATES / "report.css").read_text()
    var = dict(re.findall(r"--([a-z]+): (#[0-9a-f]{6})", css))
    for text in ("fg", "muted", "green", "amber", "red", "blue", "grey"):
        for background in (var["bg"], var["soft"], "#fff7e6"):
            assert _contrast(var[text], background) >= 4.5, (text, background)
    for pill in ("green", "amber", "red", "grey", "blue"):  # white text on the verdict pills
        assert _contrast("#ffffff", var[pill]) >= 4.5, pill
    for series in re.findall(r"svg \.s\d \{ stroke: (#[0-9a-f]{6})", css):
        assert _contrast(series, var["bg"]) >= 4.5, series


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 375])
def test_long_names_never_overflow_and_the_nav_stays_in_view(
    launched_chromium: Any, demo_run: Path, tmp_path: Path, width: int
) -> None:
    report: dict[str, Any] = copy.deepcopy(joined_report(demo_run))
    long = "expert-" + "x" * 193
    old = report["statistics"]["treatments"][0]
    text = json.dumps(report).replace(f'"{old}"', f'"{long}"')
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(Report.model_validate(json.loads(text))))
    browser = Browser(launched_chromium, width=width, mobile=width < 500)
    try:
        page = browser.open(page_file)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for box in [a.bounding_box() for a in page.locator("nav a").all()]:
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        page.locator("#sample-body tr.row").first.click()
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # the open detail too
        page.screenshot(path=str(ARTIFACTS / f"report-long-names-{width}.png"), full_page=True)
        assert browser.errors == []
    finally:
        browser.browser.close()
