"""Search, filters and sorting on the sample table (issue 33, point 3), and a capped page whose
every link leads to a row it holds (point 1), at 1280 and 375 px."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, joined_report
from knowmeter.report.html import render_html
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS

pytestmark = pytest.mark.browser

WIDTHS = [1280, 375]


def page_width(browser: Browser) -> int:
    return int(browser.browser.pages[0].viewport_size["width"])


def _ids(page: Any) -> list[str]:
    rows = page.locator("#sample-body tr.row")
    return [rows.nth(i).get_attribute("data-sample") for i in range(rows.count())]


@pytest.fixture()
def demo_report(demo_run: Path) -> dict[str, Any]:
    return copy.deepcopy(joined_report(demo_run))


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def sized(launched_chromium: Any, request: pytest.FixtureRequest) -> Iterator[Browser]:
    """A browser context at 1280 px, then at 375 px (a phone)."""
    browser = Browser(launched_chromium, width=request.param, mobile=request.param < 500)
    yield browser
    browser.browser.close()


def test_search_finds_prompts_outputs_and_assertion_messages(
    sized: Browser, demo_run: Path, demo_report: dict[str, Any]
) -> None:
    page, width = sized.open(demo_run / "report.html"), page_width(sized)
    search = page.get_by_test_id("filter-text")
    tasks = demo_report["tasks"]
    target = tasks[3]
    for needle, where in (
        (target["exec"]["output"].split("\n")[0][:40], lambda t: t["exec"]["output"]),
        (
            target["grade"]["assertions"][0]["message"],
            lambda t: " ".join(a["message"] for a in t["grade"]["assertions"]),
        ),
    ):
        search.fill(needle)
        want = {t["sample_id"] for t in tasks if needle.lower() in where(t).lower()}
        assert want and set(_ids(page)) == want, needle
    prompt = next(e["text"] for e in target["exec"]["trace"]["events"] if e.get("role") == "user")
    search.fill(prompt[:30].upper())  # any case
    assert target["sample_id"] in _ids(page)
    page.screenshot(path=str(ARTIFACTS / f"report-search-{width}.png"))
    search.fill("no such words anywhere 12345")
    assert _ids(page) == [] and page.get_by_test_id("no-match").is_visible()
    assert page.get_by_test_id("filter-count").get_attribute("role") == "status"
    assert sized.errors == []


def test_filters_disagree_failed_assertion_and_score_range(
    sized: Browser, demo_run: Path, demo_report: dict[str, Any]
) -> None:
    page, width = sized.open(demo_run / "report.html"), page_width(sized)
    by_sample: dict[str, dict[str, Any]] = {}
    for t in demo_report["tasks"]:
        by_sample.setdefault(t["sample_id"], {})[t["variant"]] = t
    status = page.get_by_test_id("filter-status")
    status.select_option("disagree")
    disagree = {s for s, ts in by_sample.items() if len({t["grade"]["passed"] for t in ts.values()}) > 1}
    assert disagree and set(_ids(page)) == disagree
    status.select_option("assert")
    failed = {
        s
        for s, ts in by_sample.items()
        if any(a["passed"] is False for t in ts.values() for a in t["grade"]["assertions"])
    }
    assert set(_ids(page)) == failed
    status.select_option("")
    page.get_by_test_id("filter-min").fill("4.5")
    page.get_by_test_id("filter-max").fill("5")
    ranged = {s for s, ts in by_sample.items() if any(4.5 <= (t["grade"]["composite"] or -1) <= 5 for t in ts.values())}
    assert set(_ids(page)) == ranged
    assert page.get_by_test_id("filter-count").inner_text().startswith(f"{len(ranged)} of ")
    page.screenshot(path=str(ARTIFACTS / f"report-filters-{width}.png"))
    assert sized.errors == []


def test_every_column_sorts_and_numeric_ids_sort_as_numbers(
    sized: Browser, demo_report: dict[str, Any], tmp_path: Path
) -> None:
    names = sorted({t["sample_id"] for t in demo_report["tasks"]})
    number = {name: str(i + 1) for i, name in enumerate(names)}
    for t in demo_report["tasks"]:
        t["sample_id"] = number[t["sample_id"]]
    for g in demo_report["gaps"]["variants"]:
        for s in g["signals"]:
            s["sample_id"] = number[s["sample_id"]]
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(Report.model_validate(demo_report)))
    page = sized.open(page_file)
    page.get_by_test_id("sort-sample").click()
    assert _ids(page) == [str(i + 1) for i in range(len(names))]  # 1, 2, …, 10, not 1, 10, 2
    page.get_by_test_id("sort-sample").click()
    assert _ids(page) == [str(i) for i in range(len(names), 0, -1)]
    control = demo_report["statistics"]["control"]
    score = {t["sample_id"]: t["grade"]["composite"] for t in demo_report["tasks"] if t["variant"] == control}
    page.get_by_test_id("sort-variant").first.click()  # highest first
    shown = [score[i] for i in _ids(page)]
    assert shown == sorted(shown, reverse=True)
    gaps = page.get_by_test_id("sort-gaps")
    gaps.click()
    counts = [int(c) if c != "none" else 0 for c in page.locator("#sample-body tr.row td:last-child").all_inner_texts()]
    assert counts == sorted(counts, reverse=True) and gaps.get_attribute("aria-sort") == "descending"
    assert sized.errors == []


def test_a_capped_page_links_only_to_rows_it_holds(sized: Browser, demo_report: dict[str, Any], tmp_path: Path) -> None:
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(Report.model_validate(demo_report), detail_rows=3))
    page, width = sized.open(page_file), page_width(sized)
    links = page.locator("a.samplelink")
    held = set(_ids(page))
    assert len(held) == 3 and links.count() > 0
    assert {links.nth(i).get_attribute("data-sample") for i in range(links.count())} <= held
    assert "belong to rows the page does not hold" in page.get_by_test_id("inventory-note").first.inner_text()
    signals = sum(len(g["signals"]) for g in demo_report["gaps"]["variants"])
    assert links.count() < signals
    page.screenshot(path=str(ARTIFACTS / f"report-capped-{width}.png"), full_page=True)
    assert sized.errors == []
