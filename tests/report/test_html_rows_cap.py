"""The page embeds the detail of at most a fixed number of sample rows: which rows (variants that
disagree, then errors and failed assertions, then the rest), in report order, and the page says
how many of how many are shown and that report.json holds every task."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, joined_report
from knowmeter.report.html import render_html
from knowmeter.report.html._payload import DETAIL_ROWS
from tests.conftest import REPO
from tests.report.test_html_static import Page


def _keys(report: dict[str, Any]) -> list[tuple[str, int]]:
    """The report's sample × repeat rows, in report order."""
    keys: list[tuple[str, int]] = []
    for t in report["tasks"]:
        if (t["sample_id"], t["repeat"]) not in keys:
            keys.append((t["sample_id"], t["repeat"]))
    return keys


@pytest.fixture()
def shaped(demo_run: Path) -> dict[str, Any]:
    """The demo's report with every task passing, except: row 2's treatment has an execution
    error (the variants disagree), row 5 has an execution error in both variants, row 10's
    treatment fails an assertion (the variants disagree)."""
    report: dict[str, Any] = copy.deepcopy(joined_report(demo_run))
    keys = _keys(report)
    control = report["statistics"]["control"]
    for t in report["tasks"]:
        t["exec"]["error"] = None
        t["grade"]["passed"] = True
        t["grade"].pop("judge_error", None)
        for a in t["grade"]["assertions"]:
            a["passed"] = True
        row = keys.index((t["sample_id"], t["repeat"]))
        treatment = t["variant"] != control
        if row == 5 or (row == 2 and treatment):
            t["exec"]["error"] = "the agent exited 1"
        if row == 10 and treatment:
            t["grade"]["passed"] = False
            t["grade"]["assertions"][0]["passed"] = False
    return report


def _page(report: dict[str, Any], detail_rows: int) -> tuple[dict[str, Any], str]:
    page = Page(render_html(Report.model_validate(report), detail_rows=detail_rows))
    blob = next(body for attrs, body in page.scripts if attrs.get("type") == "application/json")
    return json.loads(blob), " ".join(" ".join(page.text).split())


@pytest.mark.parametrize(("limit", "rows"), [(1, [2]), (2, [2, 10]), (3, [2, 5, 10]), (5, [0, 1, 2, 5, 10])])
def test_rows_that_disagree_come_first_then_errors_then_report_order(
    shaped: dict[str, Any], limit: int, rows: list[int]
) -> None:
    keys = _keys(shaped)
    data, text = _page(shaped, limit)
    assert [(r["id"], r["r"]) for r in data["rows"]] == [keys[i] for i in rows]  # shown in report order
    assert (data["shown"], data["total"]) == (limit, len(keys))
    assert (
        f"The page holds the detail of {limit} of {len(keys)} sample rows" in text
        and "Every task of every row is in report.json." in text
    )


def test_a_row_with_a_gap_signal_comes_before_the_rest(shaped: dict[str, Any]) -> None:
    """The gap inventory links to rows with a gap signal: they are kept before the plain rows."""
    keys = _keys(shaped)
    for t in shaped["tasks"]:
        gaps = (t.get("analysis") or {}).get("gaps") or {}
        if keys.index((t["sample_id"], t["repeat"])) != 7 and gaps.get("signals"):
            gaps["signals"] = []
    with_gap = [t for t in shaped["tasks"] if keys.index((t["sample_id"], t["repeat"])) == 7]
    assert any(t["analysis"]["gaps"]["signals"] for t in with_gap), "the demo's row 7 has a gap signal"
    data, text = _page(shaped, 4)
    assert [(r["id"], r["r"]) for r in data["rows"]] == [keys[i] for i in (2, 5, 7, 10)]
    assert "then rows with a gap signal, then the rest" in text


def test_every_row_and_no_note_within_the_cap(shaped: dict[str, Any]) -> None:
    keys = _keys(shaped)
    assert len(keys) < DETAIL_ROWS
    for limit in (len(keys), DETAIL_ROWS):
        data, text = _page(shaped, limit)
        assert [(r["id"], r["r"]) for r in data["rows"]] == keys
        assert (data["shown"], data["total"]) == (len(keys), len(keys))
        assert "The page holds the detail of" not in text


def test_a_shown_row_keeps_its_whole_detail(shaped: dict[str, Any]) -> None:
    keys = _keys(shaped)
    data, _ = _page(shaped, 1)
    (row,) = data["rows"]
    tasks = [t for t in shaped["tasks"] if (t["sample_id"], t["repeat"]) == keys[2]]
    assert set(row["v"]) == {t["variant"] for t in tasks}
    for t in tasks:
        shown = row["v"][t["variant"]]
        assert shown["err"] == t["exec"]["error"] and shown["out"] == [t["exec"]["output"], 0]


def test_the_readme_states_the_cap() -> None:
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert f"The page holds the detail of at most {DETAIL_ROWS:,} sample rows" in text


def test_a_report_json_in_another_order_still_has_one_row_per_sample(shaped: dict[str, Any]) -> None:
    keys = _keys(shaped)
    shuffled = {**shaped, "tasks": shaped["tasks"][::-1]}
    data, _ = _page(shuffled, DETAIL_ROWS)
    assert [(r["id"], r["r"]) for r in data["rows"]] == keys
    assert all(len(r["v"]) == 2 for r in data["rows"])


def test_rows_and_traces_stay_within_the_byte_budget(shaped: dict[str, Any]) -> None:
    """Issue 33 point 1: the page's detail has a byte budget; traces have their own, and a row
    over it keeps its text but not its trace (the page says how many)."""
    from knowmeter.report import ReportView
    from knowmeter.report.html._payload import payload

    view = ReportView(Report.model_validate(shaped))
    whole = payload(view)
    assert whole["traced"] == whole["shown"] == whole["total"]
    no_traces = payload(view, budget=(10**9, 0))
    assert no_traces["shown"] == whole["shown"] and no_traces["traced"] == 0
    assert all(t["tl"] is None for r in no_traces["rows"] for t in r["v"].values())
    one_row = len(json.dumps(whole["rows"][0], separators=(",", ":")))
    small = payload(view, budget=(3 * one_row, 10**9))
    assert 3 <= small["shown"] < whole["total"]
    kept = {(r["id"], r["r"]) for r in small["rows"]}
    assert {_keys(shaped)[i] for i in (2, 5, 10)} <= kept  # the rows that disagree or failed first
    page = Page(render_html(Report.model_validate(shaped), detail_rows=DETAIL_ROWS))
    assert "are left out to keep the page small" not in " ".join(page.text)


def test_the_page_script_survives_secret_scrubbing() -> None:
    """Every page goes through the secret scrubber when written or served: a script line that
    looked like a secret would be redacted and the script blocked by its own hash."""
    from knowmeter._secrets import scrub
    from knowmeter.report.html import assets, page_script

    for js in (assets()[1], page_script("compare.js")[0]):  # the report's and the viewer's compare page's
        assert scrub(js) == js
