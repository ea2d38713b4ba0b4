"""``knowmeter view`` searches and filters every row of a run, not only the rows whose detail the
page embeds, and hands a row's detail on demand (issue 33, point 3); the page opened from disk
says its search covers the rows it holds."""

from __future__ import annotations

import http.client
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import ReportView, joined_report, read_report
from knowmeter.report.html import render_html
from knowmeter.viewer._search import PAGE_ROWS, RunIndex, parse_query
from knowmeter.viewer._server import ViewerServer
from tests.report.conftest import Browser
from tests.report.report_support import ARTIFACTS
from tests.report.test_viewer import served

#: rows whose detail the page embeds in these tests (the demo has 23)
HELD = 5


def _get(server: ViewerServer, path: str, host: str | None = None, method: str = "GET") -> tuple[int, Any, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=60)
    conn.request(method, path, headers={"Host": host} if host else {})
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    return resp.status, resp.headers, body


def _tasks(run: Path) -> list[dict[str, Any]]:
    return list(joined_report(run)["tasks"])


def _rows(tasks: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, dict[str, Any]]]:
    rows: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for t in tasks:
        rows.setdefault((t["sample_id"], t["repeat"]), {})[t["variant"]] = t
    return rows


def _text(key: tuple[str, int], row: dict[str, dict[str, Any]]) -> str:
    """What a search looks in, written independently of the index."""
    parts = [key[0], *(t.get("prompt") or "" for t in row.values())]
    for t in row.values():
        parts += [t["exec"]["output"] or "", t["exec"].get("error") or ""]
        parts += [f"{a['type']} {a['message']}" for a in t["grade"]["assertions"]]
    return "\n".join(parts).lower()


@pytest.fixture(scope="module")
def index(demo_run: Path) -> RunIndex:
    return RunIndex.build(ReportView(read_report(demo_run / "report.json", demo_run.name)))


def _found(index: RunIndex, **query: str) -> list[tuple[str, int]]:
    answer = index.search(parse_query({k: [v] for k, v in query.items()}))
    return [(r["id"], r["r"]) for r in answer["rows"]]


def test_search_and_filters_match_every_row_of_the_run(index: RunIndex, demo_run: Path) -> None:
    tasks = _tasks(demo_run)
    rows = _rows(tasks)
    needles = [
        tasks[5]["exec"]["output"].split(".")[0][:30].upper(),  # an output, any case
        tasks[0]["grade"]["assertions"][0]["message"],  # an assertion message
        tasks[0]["prompt"][:25],  # a prompt
        "icontains",  # an assertion type
    ]
    for needle in needles:
        want = [k for k, row in rows.items() if needle.lower() in _text(k, row)]
        assert want and _found(index, q=needle) == want, needle
    assert _found(index, q="no such words anywhere 12345") == []
    assert len(_found(index)) == len(rows)
    checks = {
        "fail": lambda row: any(t["grade"]["passed"] is False and not t["exec"].get("error") for t in row.values()),
        "assert": lambda row: any(a["passed"] is False for t in row.values() for a in t["grade"]["assertions"]),
        "disagree": lambda row: len({t["grade"]["passed"] for t in row.values()}) > 1,
        "gap": lambda row: any(t["analysis"]["gaps"]["signals"] for t in row.values()),
    }
    for status, check in checks.items():
        want = [k for k, row in rows.items() if check(row)]
        assert _found(index, status=status) == want, status
    control = next(iter(rows.values()))
    name = sorted(control)[0]
    want = [k for k, row in rows.items() if name in row and 3.0 <= (row[name]["grade"]["composite"] or -1) <= 4.5]
    assert _found(index, variant=name, min="3", max="4.5") == want


def test_sorts_page_and_bad_queries(index: RunIndex) -> None:
    ids = [k[0] for k in _found(index, sort="id")]
    assert ids == sorted(ids)  # the demo's ids are words
    down = index.search(parse_query({"sort": ["gaps"], "dir": ["desc"]}))["rows"]
    counts = [sum(len(t["gaps"]) for t in r["v"].values()) for r in down]
    assert counts == sorted(counts, reverse=True)
    assert index.search(parse_query({"offset": ["20"]}))["offset"] == 20
    assert len(index.search(parse_query({"offset": ["20"]}))["rows"]) == len(index.rows) - 20 <= PAGE_ROWS
    for bad, says in (({"min": ["x"]}, "min must be a number"), ({"status": ["nope"]}, "status must be one of")):
        with pytest.raises(ValueError, match=says):
            parse_query(bad)
    with pytest.raises(ValueError, match="sort must be id, repeat, gaps, delta or v:VARIANT"):
        index.search(parse_query({"sort": ["v:nope"]}))


def test_a_rows_detail_is_the_one_the_page_would_embed(index: RunIndex, demo_run: Path) -> None:
    first = _tasks(demo_run)[0]
    raw = index.detail(first["sample_id"], first["repeat"])
    assert raw is not None
    row = json.loads(raw)
    assert row["prompt"][0] == first["prompt"] and row["v"][first["variant"]]["out"][0] == first["exec"]["output"]
    assert row["v"][first["variant"]]["tl"]  # its trace timeline
    assert index.detail(first["sample_id"], 99) is None


@pytest.fixture(scope="module")
def store(demo_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo's store whose report.html embeds the detail of only ``HELD`` rows."""
    store = tmp_path_factory.mktemp("search-store") / "store"
    shutil.copytree(demo_run.parents[1], store)
    run = store / "runs" / demo_run.name
    page = render_html(read_report(run / "report.json", run.name), detail_rows=HELD)
    (run / "report.html").write_text(page)
    return store


@pytest.fixture(scope="module")
def viewer(store: Path) -> Iterator[ViewerServer]:
    with served(store) as server:
        yield server


def test_the_viewer_answers_searches_and_rows_as_json(viewer: ViewerServer, demo_run: Path) -> None:
    run, first = demo_run.name, _tasks(demo_run)[0]
    status, headers, body = _get(viewer, f"/run/{run}/rows?q=icontains&status=fail")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert "default-src 'none'" in headers["Content-Security-Policy"] and headers["X-Content-Type-Options"] == "nosniff"
    found = json.loads(body)
    assert found["total"] == 23 and found["matched"] == len(found["rows"]) > 0
    status, _, body = _get(viewer, f"/run/{run}/row?sample={first['sample_id']}&repeat=0")
    assert status == 200 and json.loads(body)["id"] == first["sample_id"]
    for path, code, says in (
        (f"/run/{run}/rows?min=x", 400, "min must be a number"),
        (f"/run/{run}/rows?sort=colour", 400, "sort must be"),
        (f"/run/{run}/row?sample=nope&repeat=0", 404, "no row of sample 'nope'"),
        (f"/run/{run}/row?sample=x", 400, "a row is named by"),
        ("/run/20990101-000000-abcdef/rows?q=a", 404, "no such run"),
        ("/run/../../etc/rows", 404, "no such page"),
        (f"/run/{run}/rows?a&b&c&d&e&f&g&h&i&j&k&l&m", 400, "malformed query"),
    ):
        status, _, body = _get(viewer, path)
        assert status == code and says in body, path
    assert _get(viewer, f"/run/{run}/rows?q=a", host="evil.example")[0] == 403  # DNS rebinding
    assert _get(viewer, f"/run/{run}/rows?q=a", method="POST")[0] == 405


def test_the_index_is_built_once_and_again_when_the_run_changes(demo_run: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_run.parents[1], store)
    builds: list[int] = []
    real = RunIndex.build

    def counted(view: ReportView) -> RunIndex:
        builds.append(1)
        return real(view)

    run = store / "runs" / demo_run.name
    with pytest.MonkeyPatch.context() as mp, served(store) as server:
        mp.setattr(RunIndex, "build", staticmethod(counted))
        for q in ("a", "b", "refund"):
            assert _get(server, f"/run/{demo_run.name}/rows?q={q}")[0] == 200
        assert len(builds) == 1
        stat = (run / "report.json").stat()
        os.utime(run / "report.json", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        assert _get(server, f"/run/{demo_run.name}/rows?q=a")[0] == 200
        assert len(builds) == 2


def _ids(page: Any) -> list[str]:
    rows = page.locator("#sample-body tr.row")
    return [rows.nth(i).get_attribute("data-sample") for i in range(rows.count())]


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 375])
def test_the_viewer_page_searches_and_opens_rows_it_does_not_hold(
    launched_chromium: Any, viewer: ViewerServer, store: Path, demo_run: Path, width: int
) -> None:
    tasks = _tasks(demo_run)
    held = json.loads(
        (store / "runs" / demo_run.name / "report.html")
        .read_text()
        .split('id="km-data"', 1)[1]
        .split(">", 1)[1]
        .split("</script>", 1)[0]
    )
    held_ids = {r["id"] for r in held["rows"]}
    rows = _rows(tasks)
    target = next(  # a row the page does not hold, whose variants answered differently
        t
        for t in tasks
        if t["sample_id"] not in held_ids and len({u["exec"]["output"] for u in rows[(t["sample_id"], 0)].values()}) > 1
    )
    needle = target["prompt"][:30]
    want = {k[0] for k, row in _rows(tasks).items() if needle.lower() in _text(k, row)}
    from playwright.sync_api import expect

    browser = Browser(launched_chromium, width=width, mobile=width < 500)
    try:
        page = browser.open(f"{viewer.url}run/{demo_run.name}")
        scope = page.get_by_test_id("search-scope")
        assert "all 23 rows of the run" in scope.inner_text()
        expect(page.locator("#sample-body tr.row")).to_have_count(23)  # the viewer's rows replace the 5 held
        page.get_by_test_id("filter-text").fill(needle)
        expect(page.get_by_test_id("filter-count")).to_contain_text(
            f"{len(want)} of 23 rows (all rows of the run searched)"
        )
        assert set(_ids(page)) == want and target["sample_id"] in want
        page.locator(f'#sample-body tr.row[data-sample="{target["sample_id"]}"]').first.click()
        detail = page.locator("#sample-body tr.detail")
        detail.get_by_test_id("timeline").first.wait_for()
        assert target["exec"]["output"][:40] in " ".join(detail.get_by_test_id("output").all_inner_texts())
        assert detail.locator("ins, del").count() > 0  # the word diff of the fetched row
        page.screenshot(path=str(ARTIFACTS / f"viewer-search-{width}.png"), full_page=False)
        page.get_by_test_id("filter-text").fill("")
        page.get_by_test_id("filter-status").select_option("fail")
        want_fail = sum(
            any(t["grade"]["passed"] is False and not t["exec"].get("error") for t in row.values())
            for row in _rows(tasks).values()
        )
        expect(page.get_by_test_id("filter-count")).to_contain_text(f"{want_fail} of 23 rows")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert browser.errors == []  # no CSP violation, no failed request
    finally:
        browser.browser.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 375])
def test_the_page_from_disk_says_its_search_covers_the_rows_it_holds(
    launched_chromium: Any, store: Path, demo_run: Path, width: int
) -> None:
    browser = Browser(launched_chromium, width=width, mobile=width < 500)
    try:
        page = browser.open(store / "runs" / demo_run.name / "report.html")
        scope = page.get_by_test_id("search-scope").inner_text()
        assert f"cover the {HELD} rows this page holds, not all 23" in scope and "knowmeter view" in scope
        page.get_by_test_id("filter-text").fill("a")
        assert len(_ids(page)) <= HELD
        assert "(23 in the run)" in page.get_by_test_id("filter-count").inner_text()
        page.screenshot(path=str(ARTIFACTS / f"report-search-scope-{width}.png"))
        assert browser.errors == [] and all(r.startswith("file:") for r in browser.requests)
    finally:
        browser.browser.close()


@pytest.mark.browser
def test_hostile_rows_fetched_from_the_viewer_stay_text(
    launched_chromium: Any, hostile_run: Path, tmp_path: Path
) -> None:
    """Rows searched and fetched from the viewer (ids, prompts, outputs, messages and traces that
    carry markup) are shown as text: nothing runs, no dialog, no on* attribute."""
    store = tmp_path / "store"
    shutil.copytree(hostile_run.parents[1], store)
    run = store / "runs" / hostile_run.name
    (run / "report.html").write_text(render_html(read_report(run / "report.json", run.name), detail_rows=1))
    from playwright.sync_api import expect

    browser = Browser(launched_chromium)
    try:
        with served(store) as server:
            page = browser.open(f"{server.url}run/{hostile_run.name}")
            # the page's first answer (no query) also says "all rows searched": wait for this query's
            # own count, or the rows opened below are redrawn closed when its answer comes
            _, _, answer = _get(server, f"/run/{hostile_run.name}/rows?q=question+1")
            matched = json.loads(answer)["matched"]
            assert 1 < matched < 21
            page.get_by_test_id("filter-text").fill("question 1")
            expect(page.get_by_test_id("filter-count")).to_contain_text(
                f"{matched} of 21 rows (all rows of the run searched)"
            )
            rows = page.locator("#sample-body tr.row")
            assert rows.count() > 1
            for i in range(rows.count()):
                rows.nth(i).click()
            expect(page.locator("#sample-body tr.detail [data-testid=timeline]")).to_have_count(2 * rows.count())
            assert "<script>window.__pwned = 1</script>" in page.locator("#sample-body").inner_text()
            assert page.evaluate("window.__pwned") is None
            attrs = page.evaluate(
                "[...document.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name))"
                ".filter(n => n.startsWith('on'))"
            )
            assert attrs == [] and browser.dialogs == [] and browser.errors == []
    finally:
        browser.browser.close()


@pytest.mark.browser
def test_a_held_row_without_its_trace_gets_it_from_the_viewer(
    launched_chromium: Any, demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page that left its rows' traces out (trace budget spent) shows them when served by the viewer."""
    from knowmeter.report.html import _payload

    store = tmp_path / "store"
    shutil.copytree(demo_run.parents[1], store)
    run = store / "runs" / demo_run.name
    no_traces = {"limit": _payload.DETAIL_ROWS, "budget": (_payload.DETAIL_BYTES, 0)}
    monkeypatch.setattr(_payload.payload, "__kwdefaults__", no_traces)
    page_text = render_html(read_report(run / "report.json", run.name))
    assert 'data-testid="traces-note"' in page_text  # no row kept its trace
    (run / "report.html").write_text(page_text)
    browser = Browser(launched_chromium)
    try:
        page = browser.open(run / "report.html")  # from disk: said to be left out
        page.locator("#sample-body tr.row").first.click()
        assert "trace not on this page" in page.locator("#sample-body tr.detail").inner_text()
        with served(store) as server:
            page = browser.open(f"{server.url}run/{demo_run.name}")
            page.locator("#sample-body tr.row").first.click()
            page.locator("#sample-body tr.detail").get_by_test_id("timeline").first.wait_for()
            assert "trace not on this page" not in page.locator("#sample-body tr.detail").inner_text()
        assert browser.errors == []
    finally:
        browser.browser.close()
