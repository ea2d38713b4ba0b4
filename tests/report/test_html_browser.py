"""The HTML report in a real browser (Playwright driving Debian's chromium): the demo's page
works offline with no console error and no request; hostile content never runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.report import joined_report
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS, HOSTILE

pytestmark = pytest.mark.browser


def test_demo_report_pill_filters_side_by_side_timeline(browser: Browser, demo_run: Path) -> None:

    report = joined_report(demo_run)
    page_file = demo_run / "report.html"
    page = browser.open(page_file)
    page.screenshot(path=str(ARTIFACTS / "report-top.png"))
    assert page.get_by_test_id("verdict-pill").inner_text() == report["decision"]["outcome"]

    rows = page.locator("#sample-body tr.row")
    total = len({(t["sample_id"], t["repeat"]) for t in report["tasks"]})
    assert rows.count() == total
    control = report["statistics"]["control"]
    failed = {t["sample_id"] for t in report["tasks"] if t["variant"] == control and t["grade"]["passed"] is False}
    page.get_by_test_id("filter-variant").select_option(control)
    page.get_by_test_id("filter-status").select_option("fail")
    assert {rows.nth(i).get_attribute("data-sample") for i in range(rows.count())} == failed
    assert page.get_by_test_id("filter-count").inner_text() == f"{len(failed)} of {total} rows"

    page.get_by_test_id("filter-status").select_option("")
    page.get_by_test_id("filter-variant").select_option("")
    page.get_by_test_id("sort-delta").click()  # largest difference first
    first = rows.nth(0).get_attribute("data-sample")
    by_sample = {(t["sample_id"], t["variant"]): t["grade"]["composite"] for t in report["tasks"]}
    treatment = report["statistics"]["treatments"][0]
    diffs = {s: by_sample[(s, treatment)] - by_sample[(s, control)] for s, _ in by_sample}
    assert diffs[first] == max(diffs.values())

    rows.nth(0).click()
    sides = page.get_by_test_id("side-by-side")
    assert sides.count() == 1
    outputs = sides.get_by_test_id("output")
    assert outputs.count() == 2
    task = {t["variant"]: t for t in report["tasks"] if t["sample_id"] == first}
    assert outputs.nth(1).inner_text().strip() == task[treatment]["exec"]["output"].strip()
    timeline = sides.get_by_test_id("timeline").nth(0)
    calls = [e for e in task[control]["exec"]["trace"]["events"] if e["kind"] in ("tool_call", "message")]
    assert timeline.locator("li").count() == len(calls)
    sides.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "report-detail.png"))

    # a gap-inventory link opens that sample
    link = page.locator("a.samplelink").first
    sample = link.get_attribute("data-sample")
    link.click()
    page.wait_for_selector("tr.detail")
    assert page.get_by_test_id("filter-text").input_value() == sample
    assert page.locator("li.failed-search").count() >= 1
    page.screenshot(path=str(ARTIFACTS / "report-full.png"), full_page=True)

    assert browser.errors == []
    assert browser.requests == [page_file.as_uri()]


def test_hostile_content_never_runs_and_the_layout_holds(browser: Browser, hostile_run: Path) -> None:
    page_file = hostile_run / "report.html"
    page = browser.open(page_file)
    rows = page.locator("#sample-body tr.row")
    n = rows.count()
    assert n == len(HOSTILE) * 3
    for i in range(n):  # open every row: outputs, assertions, traces of every task
        rows.nth(i).click()
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / "report-hostile.png"), full_page=True)
    assert page.evaluate("window.__pwned") is None
    assert browser.dialogs == [] and browser.errors == []
    assert browser.requests == [page_file.as_uri()]
    # the payloads are on the page as text, and every section is still there after the samples
    text = page.locator("#samples").inner_text()
    for payload in HOSTILE[:6]:
        assert payload in text
    assert page.locator("#provenance").is_visible()
    assert page.locator("script").count() == 2
    assert page.locator("#samples img, #samples svg, #samples textarea, #samples iframe").count() == 0


def test_viewer_pages_in_the_browser(browser: Browser, demo_run: Path) -> None:
    import threading

    from knowmeter.viewer import make_server

    server = make_server(demo_run.parents[1], "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page = browser.browser.new_page()
        page.on("console", lambda m: browser.errors.append(m.text) if m.type == "error" else None)
        page.on("request", lambda r: browser.requests.append(r.url))
        page.goto(server.url)
        page.locator("[data-testid=runs] a").first.click()
        page.wait_for_selector("body[data-ready]")
        assert page.get_by_test_id("verdict-pill").is_visible()
        page.goto(server.url + "trends")
        assert page.locator("svg.chart").count() == 3
        page.screenshot(path=str(ARTIFACTS / "viewer-trends.png"), full_page=True)
        page.goto(server.url)
        page.locator("form button").click()  # compare the two selected runs (a GET form)
        page.wait_for_url("**/compare?**")
        page.screenshot(path=str(ARTIFACTS / "viewer-compare.png"), full_page=True)
    finally:
        server.shutdown()
        server.server_close()
    assert browser.errors == []
    assert all(url.startswith(server.url) for url in browser.requests)


def test_comprehension_page_in_the_browser(browser: Browser, comprehension_run: Path) -> None:
    """The comprehension section renders, a case's behaviors open on click, no error, no request."""
    page = browser.open(comprehension_run / "report.html")
    assert page.get_by_test_id("comprehension-verdict").inner_text() == "SHALLOW"
    assert page.locator("#comparisons").count() == 0
    details = page.locator("tr.casedetail details").first
    assert not details.locator("blockquote").first.is_visible()
    details.locator("summary").click()
    assert details.locator("blockquote").first.is_visible()
    assert page.locator("#sample-body tr.row").count() == 5  # one answer row per case: both arms side by side
    page.screenshot(path=str(ARTIFACTS / "comprehension.png"), full_page=True)
    assert browser.errors == [] and all(u.startswith("file:") for u in browser.requests)


def test_hostile_comprehension_content_never_runs_and_fits_a_phone(
    browser: Browser, comprehension_run: Path, tmp_path: Path
) -> None:
    """Every untrusted text the comprehension section shows (skill name, notes, reasons, caveats,
    case ids, behavior ids, evidence quotes, rationales, overrides, ungraded reasons, n-grams)
    carrying script, bidi overrides and an unbroken 5,000-character word: nothing runs, nothing
    is fetched, and the page fits a 375 px screen with every case opened."""

    from knowmeter.report import Report
    from knowmeter.report.html import render_html

    payloads = [*HOSTILE, "abc \u202eevil\u202c def", "y" * 5000]
    report = joined_report(comprehension_run)
    comp = report["comprehension"]
    comp["skill"]["name"], comp["eval_file"]["path"] = payloads[0], payloads[1]
    comp["notes"].append(payloads[2])
    comp["verdict"]["reasons"].append(payloads[3])
    comp["verdict"]["caveats"].append(payloads[4])
    comp["ungraded"].append(payloads[5])
    for case in comp["cases"]:
        case["case_id"] = payloads[6]
        for grading in case["with_skill"] + case["baseline"]:
            grading["overlap_ngrams"] = [payloads[7], payloads[8]]
            grading["ungraded_reason"] = payloads[0]
            for behavior in grading["behaviors"]:
                behavior.update(id=payloads[1], evidence_quote=payloads[8], rationale=payloads[5])
                behavior.update(override=payloads[3], review=payloads[7])
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(Report.model_validate(report)), encoding="utf-8")
    page = browser.open(page_file)
    page.set_viewport_size({"width": 375, "height": 800})
    for summary in page.locator("#comprehension summary").all():
        summary.click()
    page.wait_for_timeout(200)
    page.screenshot(path=str(ARTIFACTS / "comprehension-hostile-375.png"), full_page=True)
    assert page.evaluate("window.__pwned") is None
    assert browser.dialogs == [] and browser.errors == [] and browser.requests == [page_file.as_uri()]
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    text = page.locator("#comprehension").inner_text()
    assert payloads[0] in text and "abc ⟨U+202E⟩evil⟨U+202C⟩ def" in text  # as text, the bidi override shown
