"""report.html in a real browser, the review's findings: a gap-inventory link opens exactly its
sample and repeat (or says the page does not hold it), long outputs are diffed (or said to be too
long), lines are not filled, print and 375 px show everything, bidi controls are shown as codes,
the table works from the keyboard, a run without a control has no control, and the row count
states what the page holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, joined_report
from knowmeter.report.html import render_html
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS, latest_run
from tests.support.cli import km_process

pytestmark = pytest.mark.browser


def _rows(page: Any) -> list[str]:
    """The shown rows as "id r<repeat>" (+ " open")."""
    rows: list[str] = page.evaluate(
        "[...document.querySelectorAll('#sample-body tr.row')].map(r => r.dataset.sample + ' r' +"
        " r.children[1].textContent + (r.classList.contains('open') ? ' open' : ''))"
    )
    return rows


def test_a_gap_link_opens_exactly_its_sample_and_repeat(browser: Browser, review_run: Path) -> None:
    page = browser.open(review_run / "report.html")
    link = page.locator("#gaps details[open] a.samplelink").first
    assert link.inner_text() == "gap-1 (repeat 1)"
    link.click()
    page.wait_for_selector("tr.detail")
    assert _rows(page) == ["gap-1 r1 open"]  # not Gap-1x (contains "gap-1"), not repeat 0
    assert "secret-term" in page.locator("tr.detail").inner_text()
    assert "showing only sample gap-1 (repeat 1)" in page.get_by_test_id("link-note").inner_text()
    page.get_by_test_id("filter-status").select_option("")  # any filter: every row again
    assert len(_rows(page)) == 4 and page.get_by_test_id("link-note").is_hidden()  # the id filter (substring) stays
    link.click()  # the same link again (the hash is unchanged): its row opens again
    page.wait_for_selector("tr.detail")
    assert _rows(page) == ["gap-1 r1 open"]
    assert browser.errors == []


def test_a_link_to_a_row_the_page_does_not_hold_says_so(browser: Browser, review_run: Path) -> None:
    page = browser.open(review_run / "report.html")
    page.evaluate("location.hash = '#sample=gap-1&repeat=7'")
    note = page.get_by_test_id("link-note")
    note.wait_for()
    assert "sample gap-1 (repeat 7) is not among the 8 rows this page holds" in note.inner_text()
    assert _rows(page) == [] and page.get_by_test_id("no-match").inner_text() == "no row matches these filters"
    page.evaluate("location.hash = '#sample=%E0%A4%A'")  # not URL encoding: said, not thrown
    page.wait_for_function("document.getElementById('f-note').textContent.includes('not valid URL encoding')")
    assert browser.errors == []


def test_long_outputs_are_diffed(browser: Browser, review_run: Path) -> None:
    page = browser.open(review_run / "report.html")
    page.locator("#sample-body tr.row[data-sample=long]").first.click()
    detail = page.locator("tr.detail")
    assert detail.locator("del").all_inner_texts() == ["alpha0"]
    assert detail.locator("ins").all_inner_texts() == ["CHANGED"]
    captions = detail.locator(".side > .sub").all_inner_texts()
    assert "output (words missing from the treatment struck)" in captions
    assert "output (words not in the control marked)" in captions


def test_outputs_too_different_for_a_word_diff_get_a_line_diff_or_say_so(
    browser: Browser, review_run: Path, tmp_path: Path
) -> None:
    """Row "long" r0: 300 lines, every one changed (too many words to diff: a line diff); row
    "long" r1: 2,100 lines each, all different (too many lines too: said, no marks)."""
    report = joined_report(review_run)
    for t in report["tasks"]:
        if t["sample_id"] == "long":
            lines, text = (300, "line {} alpha beta gamma delta\n") if t["repeat"] == 0 else (2100, "{}\n")
            treat = t["variant"] == "treat"
            t["exec"]["output"] = "".join(
                (text.upper() if treat else text).format(f"{'t' if treat else 'c'}{i}") for i in range(lines)
            )
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(Report.model_validate(report)))
    page = browser.open(page_file)
    rows = page.locator("#sample-body tr.row[data-sample=long]")
    rows.nth(0).click()
    detail = page.locator("tr.detail")
    assert detail.locator("del").count() == 300 and detail.locator("ins").count() == 300
    assert "output (lines missing from the treatment struck)" in detail.locator(".side > .sub").all_inner_texts()
    rows.nth(0).click()
    rows.nth(1).click()
    captions = detail.locator(".side > .sub").all_inner_texts()
    assert "output (too long to mark its differences from the treatment)" in captions
    assert "output (too long to mark its differences from the control)" in captions
    assert detail.locator("del, ins").count() == 0
    assert browser.errors == []


def test_bidi_controls_are_shown_as_their_codes(browser: Browser, review_run: Path) -> None:
    page = browser.open(review_run / "report.html")
    row = page.locator("#sample-body tr.row").filter(has_text="U+202E").first
    assert row.locator("td").first.inner_text() == "rtl\u27e8U+202E\u27e9id"
    row.click()
    outputs = page.locator("tr.detail").get_by_test_id("output").all_inner_texts()
    assert outputs == ["abc \u27e8U+202E\u27e9evil\u27e8U+202C\u27e9 def"] * 2
    assert "\u202e" not in page.locator("body").inner_text()


def test_the_sample_table_works_from_the_keyboard(browser: Browser, review_run: Path) -> None:
    page = browser.open(review_run / "report.html")
    page.focus("#f-text")
    page.keyboard.press("Tab")  # every column's sort header comes next, then the first row
    assert page.evaluate("document.activeElement.closest('th')?.dataset.testid") == "sort-sample"
    while page.evaluate("document.activeElement.closest('th')?.dataset.testid") != "sort-delta":
        page.keyboard.press("Tab")
    sort = page.get_by_test_id("sort-delta")
    assert sort.get_attribute("aria-sort") == "none"
    page.keyboard.press("Enter")
    assert sort.get_attribute("aria-sort") == "descending"
    page.keyboard.press("Space")
    assert sort.get_attribute("aria-sort") == "ascending"
    page.keyboard.press("Tab")  # the gap signals' header
    page.keyboard.press("Tab")
    opener = page.locator("#sample-body tr.row").first.locator("button")
    assert opener.evaluate("b => b === document.activeElement")
    assert opener.get_attribute("aria-expanded") == "false"
    page.keyboard.press("Enter")
    assert opener.get_attribute("aria-expanded") == "true" and page.locator("tr.detail").count() == 1
    page.keyboard.press("Space")
    assert opener.get_attribute("aria-expanded") == "false" and page.locator("tr.detail").count() == 0


def test_a_run_without_a_control_has_no_control(browser: Browser, review_project: Path) -> None:
    r = km_process("eval", "-q", "--config", "solo.yaml", cwd=review_project)
    assert r.returncode in (0, 1), r.stderr
    page = browser.open(latest_run(review_project) / "report.html")
    heads = [t.removesuffix(" ⇅") for t in page.locator("#sample-head th").all_inner_texts()]
    assert heads == ["sample", "repeat", "treat (treatment)", "gap signals"]
    page.locator("#sample-body tr.row").first.click()
    side = page.locator("tr.detail .side").first
    assert side.locator("h4").inner_text().startswith("treat (treatment) · ")
    assert "output" in side.locator(".sub").all_inner_texts()  # no caption promising marks
    assert page.locator("tr.detail del, tr.detail ins").count() == 0
    assert "No control and treatment to compare" in page.locator("#samples").inner_text()


def test_the_count_names_shown_and_total_rows(browser: Browser, review_run: Path, tmp_path: Path) -> None:
    report = Report.model_validate(joined_report(review_run))
    capped = tmp_path / "report.html"
    capped.write_text(render_html(report, detail_rows=3))
    page = browser.open(capped)
    assert page.get_by_test_id("filter-count").inner_text() == "3 of 3 shown rows (8 in the run)"
    # rows with a gap signal are kept before the rest: the inventory's link opens its row
    page.locator("#gaps details[open] a.samplelink").first.click()
    page.wait_for_selector("tr.detail")
    assert _rows(page) == ["gap-1 r1 open"]
    page.get_by_test_id("filter-text").fill("nothing-like-this")
    assert page.get_by_test_id("filter-count").inner_text() == "0 of 3 shown rows (8 in the run)"
    assert page.get_by_test_id("no-match").is_visible()


def test_charts_draw_lines_not_filled_shapes(browser: Browser, tmp_path: Path) -> None:
    from knowmeter.report.html import Series, assets, line_chart

    chart = line_chart([Series("a", [("1", 1.0), ("2", 3.0), ("3", 2.0)])], title="t", y_label="y", x_label="x")
    page_file = tmp_path / "chart.html"
    page_file.write_text(f"<!DOCTYPE html><style>{assets()[0]}</style><body data-ready=1>{chart}</body>")
    page = browser.open(page_file)
    assert page.evaluate("getComputedStyle(document.querySelector('polyline')).fill") == "none"
    assert page.evaluate("getComputedStyle(document.querySelector('circle.dot')).fill") == "rgb(36, 87, 197)"


def test_print_shows_every_row_section_and_output(browser: Browser, demo_run: Path) -> None:
    page = browser.open(demo_run / "report.html")
    page.locator("#sample-body tr.row").first.click()
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('table.grid thead th')).position") == "static"
    assert page.evaluate("getComputedStyle(document.querySelector('.out')).maxHeight") == "none"
    closed = page.locator("#provenance details:not([open]) pre.json")  # the configuration
    assert closed.is_visible()
    # the verdict pill is white text on its colour, the diff marks are colour: both printed
    for selector in ("[data-testid=verdict-pill]", "tr.detail del"):
        assert page.evaluate(f"getComputedStyle(document.querySelector('{selector}')).printColorAdjust") == "exact"
    page.pdf(path=str(ARTIFACTS / "report-print.pdf"))


def test_at_375px_tables_scroll_in_their_box_and_charts_keep_their_size(browser: Browser, demo_run: Path) -> None:
    context = browser.browser.browser.new_context(
        viewport={"width": 375, "height": 800}, is_mobile=True, has_touch=True, device_scale_factor=2
    )
    try:
        page = context.new_page()
        page.goto((demo_run / "report.html").as_uri())
        page.wait_for_selector("body[data-ready]")
        page.locator("#sample-body tr.row").first.click()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375  # the page does not scroll sideways
        table = page.locator("#variants table.grid")
        assert table.evaluate("t => t.scrollWidth > t.clientWidth")  # the table scrolls in its own box
        assert page.evaluate("document.querySelector('svg.forest').getBoundingClientRect().width") == 680
        # every section's link in view (the nav wraps; issue 33: it hid "Samples"), in at most two lines
        assert page.evaluate(
            "Array.from(document.querySelectorAll('nav a')).every(a => a.getBoundingClientRect().right <= 375)"
        )
        assert page.evaluate("document.querySelector('nav').getBoundingClientRect().height") < 64
        page.screenshot(path=str(ARTIFACTS / "report-375.png"))
    finally:
        context.close()
