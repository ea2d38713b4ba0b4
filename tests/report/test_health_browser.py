"""The skill-health page (``knowmeter observe --html``) in a real browser: trace text that tries
to be markup stays text, the page loads nothing, a long name or path never makes the page scroll
sideways (on a 375 px phone either), every folded list is reachable by keyboard, and print shows
every folded signal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from knowmeter.observe import observe
from knowmeter.report import write_text
from knowmeter.report.html import render_health_html
from tests.observe.observe_support import SessionFile
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS

pytestmark = pytest.mark.browser

#: trace text the page must show as it is (skill names hold no space): markup, bidi controls, a
#: 5,000-character word
MARKUP = [
    "<script>window.__pwned=1</script>",
    '"><img/src=x/onerror=window.__pwned=2>',
    "javascript:window.__pwned=3",
    "</script><script>window.__pwned=4</script><!--",
    "<svg/onload=window.__pwned=5>",
    "'><a/href=javascript:window.__pwned=6>x</a>",
]
NAMES = [*MARKUP, "abc\u202eevil\u202c", "x" * 5000]


def _hostile_traces(root: Path) -> Path:
    """One Claude Code session per name: the name as the skill, a search and a file path."""
    for i, name in enumerate(NAMES):
        s = SessionFile(root / "proj" / f"c{i}000000-1111-4111-8111-11111111111{i}.jsonl")
        s.human("2026-03-10T10:00:00.000Z", "go " + name)
        s.call("2026-03-10T10:00:01.000Z", f"t{i}a", "Skill", {"skill": name})
        s.result("2026-03-10T10:00:02.000Z", f"t{i}a", "Launching skill")
        s.call("2026-03-10T10:00:03.000Z", f"t{i}b", "Grep", {"pattern": name})
        s.result("2026-03-10T10:00:04.000Z", f"t{i}b", "No matches found")
        s.call("2026-03-10T10:00:05.000Z", f"t{i}c", "Read", {"file_path": f"/docs/{name}.md"})
        s.result("2026-03-10T10:00:06.000Z", f"t{i}c", "File does not exist.", is_error=True)
        s.write()
    (root / "proj" / f"{'y' * 200}.jsonl").write_text("not a trace\n")  # a long skipped-file line
    return root


@pytest.fixture(scope="module")
def health_page(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    root = tmp_path_factory.mktemp("health-hostile")
    traces = _hostile_traces(root / "traces")
    report = observe([traces, shared_dir / "reference" / "traces"], workers=1)
    return write_text(root / "health.html", render_health_html(report.to_dict()))


def _scrolls_sideways(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth"))


@pytest.mark.parametrize(("width", "mobile"), [(1400, False), (375, True)])
def test_hostile_names_stay_text_and_the_page_fits(
    launched_chromium: Any, health_page: Path, width: int, mobile: bool
) -> None:
    browser = Browser(launched_chromium, width=width, mobile=mobile)
    try:
        page = browser.open(health_page, scripted=False)
        page.screenshot(path=str(ARTIFACTS / f"health-hostile-{width}.png"))
        assert page.evaluate("window.__pwned") is None and browser.dialogs == []
        assert browser.errors == [] and browser.requests == [health_page.as_uri()]
        assert page.evaluate("document.documentElement.clientWidth") == width
        assert not _scrolls_sideways(page)
        names = page.locator("b.skillname").all_inner_texts()
        for name in MARKUP:
            assert name in names
        assert "abc\u27e8U+202E\u27e9evil\u27e8U+202C\u27e9" in names  # bidi controls shown as their code
    finally:
        browser.browser.close()


def test_folded_signals_are_reachable_by_keyboard_and_printed(browser: Browser, health_page: Path) -> None:
    page = browser.open(health_page, scripted=False)
    summaries = page.locator("summary")
    n = summaries.count()
    assert n == len(NAMES) + 1  # one per skill and (no skill)
    focused = []
    for _ in range(n):
        page.keyboard.press("Tab")
        focused.append(page.evaluate("document.activeElement.tagName"))
    assert focused == ["SUMMARY"] * n
    page.keyboard.press("Enter")  # the last one opens
    assert page.locator("details").nth(n - 1).get_attribute("open") is not None
    folded = page.locator("details:not([open]) table")
    assert folded.count() == n - 2 and not folded.first.is_visible()
    page.emulate_media(media="print")
    assert all(folded.nth(i).is_visible() for i in range(folded.count()))
    assert not _scrolls_sideways(page)


def test_print_is_landscape_and_no_table_is_clipped(browser: Browser, health_page: Path) -> None:
    """Printed, the wide skill table is a table (not the narrow screen's scroll box, which prints
    clipped) on a landscape page, and it fits the paper's width."""
    import re

    page = browser.open(health_page, scripted=False)
    pdf = page.pdf(prefer_css_page_size=True)
    box = re.search(rb"/MediaBox\s*\[0 0 ([0-9.]+) ([0-9.]+)\]", pdf)
    assert box is not None and float(box.group(1)) > float(box.group(2))  # landscape
    page.set_viewport_size({"width": 1027, "height": 900})  # A4 landscape less the default margins
    page.emulate_media(media="print")
    tables = page.evaluate(
        "Array.from(document.querySelectorAll('table.grid')).map(t => "
        "[getComputedStyle(t).display, t.getBoundingClientRect().right])"
    )
    assert tables and all(display == "table" and right <= 1027 for display, right in tables)
    assert not _scrolls_sideways(page)
