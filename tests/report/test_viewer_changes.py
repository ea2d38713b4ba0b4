"""The viewer's compare page lists the samples that changed outcome between two runs, with both
outputs side by side (issue 33, point 4)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, ReportView, index_rows, joined_report
from knowmeter.store import open_index, upsert_run
from knowmeter.viewer._changes import changes
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS
from tests.report.test_viewer import served


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
    assert flipped.b.outcome == ("pass" if first["grade"]["passed"] is False else "fail")
    gone = keys[(last["sample_id"], last["variant"], last["repeat"])]
    assert gone.a is not None and gone.b is None
    assert changes(ReportView(a), ReportView(a)) == ([], 0)


@pytest.fixture()
def two_stored_runs(demo_run: Path, tmp_path: Path) -> tuple[Path, str, str, list[dict[str, Any]]]:
    """A store holding the demo's run (A) and a copy of it (B) indexed as another run, changed as
    ``two_runs`` changes it; and A's first and last tasks (changed and dropped in B)."""
    store = tmp_path / "store"
    shutil.copytree(demo_run.parents[1], store)
    b_id = "20990101-000000-bbbbbb"
    b_dir = store / "runs" / b_id
    shutil.copytree(store / "runs" / demo_run.name, b_dir)
    (b_dir / "report.html").unlink()
    report = joined_report(b_dir)
    report["run"]["id"] = b_id
    a_tasks = copy.deepcopy([report["tasks"][0], report["tasks"][-1]])
    first = report["tasks"][0]
    first["grade"]["passed"] = not first["grade"]["passed"]
    first["exec"]["output"] = "<script>window.__pwned = 1</script> changed answer"
    report["tasks"].pop()
    stored = json.loads((b_dir / "report.json").read_text())  # schema 3: the tasks live in results.jsonl
    stored["run"]["id"] = b_id
    (b_dir / "report.json").write_text(json.dumps(stored))
    (b_dir / "results.jsonl").write_text("".join(json.dumps(t) + "\n" for t in report["tasks"]))
    with open_index(store) as conn:
        upsert_run(conn, *index_rows(Report.model_validate(report), b_dir))
    return store, demo_run.name, b_id, a_tasks


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 375])
def test_the_compare_page_shows_changed_samples_with_the_reports_detail(
    launched_chromium: Any, two_stored_runs: tuple[Path, str, str, list[dict[str, Any]]], width: int
) -> None:
    """Issue 33 point 4: a changed task opens the report's own detail for both runs — outputs side by
    side with the word diff, assertions, judges, trace timeline."""
    store, a_id, b_id, (first, last) = two_stored_runs
    browser = Browser(launched_chromium, width=width, mobile=width < 500)
    try:
        with served(store) as server:
            page = browser.open(f"{server.url}compare?a={a_id}&b={b_id}")
            assert page.get_by_test_id("changed-count").inner_text().startswith("2 sample × variant × repeat tasks")
            assert page.locator("tr.changed-row").count() == 2
            pair = page.locator(f'details.pair[data-sample="{first["sample_id"]}"][data-variant="{first["variant"]}"]')
            pair.locator("summary").click()
            detail = pair.get_by_test_id("side-by-side")
            detail.get_by_test_id("timeline").nth(1).wait_for()
            outputs = detail.get_by_test_id("output").all_inner_texts()
            assert len(outputs) == 2 and "<script>window.__pwned = 1</script> changed answer" in outputs[1]
            assert outputs[0].startswith(first["exec"]["output"][:40])
            assert detail.locator("ins").count() > 0 and detail.locator("del").count() > 0  # the word diff
            assert f"run A {a_id}" in detail.inner_text() and f"run B {b_id}" in detail.inner_text()
            assert detail.locator("ul.asserts li").count() >= 2 * len(first["grade"]["assertions"])
            assert "missing from run B struck" in detail.inner_text()
            assert page.evaluate("window.__pwned") is None
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            page.screenshot(path=str(ARTIFACTS / f"viewer-compare-{width}.png"), full_page=True)
            gone = page.locator(f'details.pair[data-sample="{last["sample_id"]}"][data-variant="{last["variant"]}"]')
            gone.locator("summary").click()
            gone.get_by_test_id("side-by-side").wait_for()
            assert gone.get_by_test_id("output").count() == 1  # in run A only
        assert browser.errors == []
    finally:
        browser.browser.close()
