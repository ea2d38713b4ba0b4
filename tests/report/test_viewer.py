"""knowmeter view: pages from the run index, GET only, 4xx for bad requests, no path
traversal (plain and encoded), loopback by default, trends never join sample sets."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from knowmeter.report import joined_report
from knowmeter.report.html import assets
from knowmeter.viewer import make_server
from knowmeter.viewer._pages import trend_series, trends_page
from knowmeter.viewer._server import ViewerServer, viewer_csp
from tests.support.cli import km_process


@contextmanager
def served(store: Path) -> Iterator[ViewerServer]:
    """A viewer over ``store`` serving on a free loopback port until the block ends (polled every
    50 ms, so it stops at once)."""
    server = make_server(store, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def viewer(demo_run: Path) -> Iterator[ViewerServer]:
    with served(demo_run.parents[1]) as server:
        yield server


def request(server: ViewerServer, method: str, path: str, host: str | None = None) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
    headers = {"Host": host} if host else {}
    conn.request(method, path, headers=headers)  # the path goes out exactly as given
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    return resp.status, body


def test_pages(viewer: ViewerServer, demo_run: Path) -> None:
    report = joined_report(demo_run)
    run_id = report["run"]["id"]
    status, body = request(viewer, "GET", "/")
    assert status == 200 and f'href="/run/{run_id}"' in body and report["decision"]["outcome"] in body
    assert report["run"]["watermark"]["id"] in body
    status, body = request(viewer, "GET", f"/run/{run_id}")
    assert status == 200 and 'data-testid="verdict-pill"' in body
    status, body = request(viewer, "GET", f"/compare?a={run_id}&b={run_id}")
    assert status == 200 and body.count(f'href="/run/{run_id}"') == 2 and "different-sets" not in body
    status, body = request(viewer, "GET", "/trends")
    assert status == 200 and "<svg" in body and report["run"]["watermark"]["id"] in body
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in body  # laid out on a phone
    assert request(viewer, "HEAD", "/")[0] == 200


@pytest.mark.parametrize(
    "path",
    [
        "/run/../../../../etc/passwd",
        "/run/..%2f..%2f..%2fetc%2fpasswd",
        "/run/%2e%2e/%2e%2e/etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/run/..%252f..%252fetc%252fpasswd",
        "/run/%2E%2E",
        "/run/....//....//etc/passwd",
        "/run/20261123-164906-95d266/../../index.sqlite",
        "//etc/passwd",
        "/index.sqlite",
        "/runs/",
        "/run/",
        "/run/%00",
        "/run/20261123-164906-95d266%2f..%2f..%2findex.sqlite",
    ],
)
def test_no_path_traversal(viewer: ViewerServer, path: str) -> None:
    status, body = request(viewer, "GET", path)
    assert status == 404 and "root:" not in body and "SQLite" not in body


def test_only_get_and_bad_requests_are_4xx(viewer: ViewerServer, demo_run: Path) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        assert request(viewer, method, "/")[0] == 405
    assert request(viewer, "GET", "/compare")[0] == 400
    assert request(viewer, "GET", "/compare?a=x&&&b")[0] == 400
    assert request(viewer, "GET", "/compare?a=20990101-000000-abcdef&b=20990101-000000-abcdef")[0] == 404
    assert request(viewer, "GET", "/nope")[0] == 404
    # a page from elsewhere that re-points its name at 127.0.0.1 (DNS rebinding) gets nothing
    assert request(viewer, "GET", "/", host="evil.example:8765")[0] == 403


def test_trends_keep_sample_sets_apart() -> None:
    rows = [
        {
            "run_id": f"r{i}",
            "created_at": f"2026-01-0{i}T00:00",
            "sample_set_id": s,
            "variant": v,
            "composite": c,
            "layer_set": "fact+behavior",
            "gap_rate": None,
            "coverage": None,
        }
        for i, s, v, c in [(1, "a@1", "x", 3.0), (2, "b@2", "x", 4.0), (3, "a@1", "x", 3.5), (3, "a@1", "y", 2.0)]
    ]
    series = trend_series(rows, "composite")
    assert set(series) == {"a@1", "b@2"}
    a = {s.name: [y for _, y in s.points] for s in series["a@1"]}
    assert a == {"x": [3.0, 3.5], "y": [None, 2.0]}
    assert [[y for _, y in s.points] for s in series["b@2"]] == [[4.0]]


def test_trends_never_join_composites_from_different_layer_sets() -> None:
    """A judge added in run 2: the variant's composites are not comparable across runs 1-3, so
    they are drawn as one line per layer set and flagged, as knowmeter trends flags them."""
    rows = [
        {
            "run_id": f"r{i}",
            "created_at": f"2026-01-0{i}T00:00",
            "sample_set_id": "a@1",
            "sample_count": 23,
            "variant": "x",
            "composite": c,
            "layer_set": layers,
            "gap_rate": 0.5,
            "coverage": 0.5,
        }
        for i, c, layers in [(1, 4.8, "fact+behavior"), (2, 4.2, "fact+behavior+judge"), (3, 4.9, "fact+behavior")]
    ]
    lines = {s.name: [y for _, y in s.points] for s in trend_series(rows, "composite")["a@1"]}
    assert lines == {"x (fact+behavior)": [4.8, None, 4.9], "x (fact+behavior+judge)": [None, 4.2, None]}
    assert [s.name for s in trend_series(rows, "gap_rate")["a@1"]] == ["x"]  # one gap rate line
    page = trends_page(rows)
    assert 'data-testid="not-comparable"' in page
    assert "x: composites come from different layer sets (fact+behavior, fact+behavior+judge)" in page


def test_a_run_page_links_back_to_the_runs_and_trends(viewer: ViewerServer, demo_run: Path) -> None:
    run_id = joined_report(demo_run)["run"]["id"]
    status, body = request(viewer, "GET", f"/run/{run_id}")
    assert status == 200 and f'<nav data-api="/run/{run_id}"><a href="/">Runs</a><a href="/trends">Trends</a>' in body
    assert '<nav><a href="/">' not in (demo_run / "report.html").read_text()  # the file has no viewer to go back to


def test_a_damaged_index_is_an_error_page_naming_it_and_the_fix(demo_run: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_run.parents[1], store)
    index = store / "index.sqlite"
    data = bytearray(index.read_bytes())
    data[100:4000] = b"\0" * 3900
    index.write_bytes(bytes(data))
    with served(store) as server:
        run_id = demo_run.name
        for path in ("/", "/trends", f"/run/{run_id}", f"/compare?a={run_id}&b={run_id}"):
            status, body = request(server, "GET", path)
            assert status == 503, path
            assert f"{index}: cannot read the run index" in body and f"run knowmeter runs --output-dir {store}" in body
    r = km_process("runs", "--output-dir", str(store), cwd=tmp_path)  # the fix the page names works
    assert r.returncode == 0 and "moved to index.sqlite.damaged and rebuilt" in r.stdout + r.stderr


@pytest.mark.parametrize(
    "field",
    [
        "variants[0].layer_means.composite",
        "comparisons[0].metrics.composite.diff.estimate",
        "gaps.variants[0].gap_rate",
    ],
)
@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_report_json_with_a_non_finite_number_is_refused_naming_the_field(
    demo_run: Path, tmp_path: Path, field: str, number: str
) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_run.parents[1], store)
    path = store / "runs" / demo_run.name / "report.json"
    report = json.loads(path.read_text())
    target: Any = report
    *parents, last = re.findall(r"[^.\[\]]+", field)
    for key in parents:
        target = target[int(key)] if key.isdigit() else target[key]
    target[last] = "__NUMBER__"
    path.write_text(json.dumps(report).replace('"__NUMBER__"', number))
    with served(store) as server:
        status, body = request(server, "GET", f"/run/{demo_run.name}")
    assert status == 422
    assert f"{path}: {field} is NaN or infinite, which is not a JSON number; the file was edited or damaged" in body


@pytest.mark.slow
def test_view_cli_warns_before_binding_beyond_loopback(tmp_path: Path) -> None:
    with socket.socket() as busy:  # a port already taken: the command warns, then fails to listen
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = km_process("view", "--host", "0.0.0.0", "--port", str(port), "--output-dir", str(tmp_path), cwd=tmp_path)
    assert "warning: serving on 0.0.0.0" in r.stderr
    assert r.returncode != 0 and f"cannot listen on 0.0.0.0:{port}" in r.stderr


def _store_copy(demo_run: Path, tmp_path: Path) -> tuple[Path, Path]:
    store = tmp_path / "store"
    shutil.copytree(demo_run.parents[1], store)
    return store, store / "runs" / demo_run.name


def test_a_run_page_is_the_stored_page_not_the_task_records_read_again(demo_run: Path, tmp_path: Path) -> None:
    """Issue 33 point 2: report.json is not read when report.html is current (here it is garbage)."""
    import os

    store, run = _store_copy(demo_run, tmp_path)
    (run / "report.json").write_text("not json")
    html_time = (run / "report.html").stat().st_mtime_ns
    os.utime(run / "report.json", ns=(html_time - 10**9, html_time - 10**9))
    with served(store) as server:
        status, body = request(server, "GET", f"/run/{demo_run.name}")
    stored = (run / "report.html").read_text()
    assert status == 200
    links = f'<nav data-api="/run/{demo_run.name}"><a href="/">Runs</a><a href="/trends">Trends</a>'
    # the viewer's policy lets the page's script (same hash) ask the viewer, and nothing else
    csp = str(escape(assets()[2])), str(escape(viewer_csp()))
    assert "connect-src &#39;none&#39;" in csp[0] and "connect-src &#39;self&#39;" in csp[1]
    assert body == stored.replace("<nav>", links, 1).replace(*csp, 1)


def test_a_stale_or_foreign_stored_page_is_rendered_again(demo_run: Path, tmp_path: Path) -> None:
    store, run = _store_copy(demo_run, tmp_path)
    report = joined_report(run)
    report["decision"]["recommendation"] = "RENDERED FROM THE NEWER REPORT"
    (run / "report.json").write_text(json.dumps(report))  # newer than report.html
    with served(store) as server:
        status, body = request(server, "GET", f"/run/{demo_run.name}")
        assert status == 200 and "RENDERED FROM THE NEWER REPORT" in body
        page = (run / "report.html").read_text().replace("sha256-", "sha256-OLD", 1)
        (run / "report.html").write_text(page)  # newer again, but from another page script
        status, body = request(server, "GET", f"/run/{demo_run.name}")
        assert status == 200 and "RENDERED FROM THE NEWER REPORT" in body and "sha256-OLD" not in body


def test_every_viewer_page_has_one_h1(viewer: ViewerServer, demo_run: Path) -> None:
    """Issue 33 point 8: a screen reader's page outline starts at an h1 on every page."""
    run_id = demo_run.name
    for path in ("/", "/trends", f"/run/{run_id}", f"/compare?a={run_id}&b={run_id}", "/nothing-here"):
        _, body = request(viewer, "GET", path)
        assert body.count("<h1") == 1, path
