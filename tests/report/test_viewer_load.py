"""The viewer holds under load (loopback only, bounded): a thousand idle connections do not
make a thousand threads, 200 concurrent page loads are all answered, a half-sent request line
frees its worker after the socket timeout, and the security headers are HTTP headers."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from knowmeter.viewer import make_server
from knowmeter.viewer._server import MAX_CONNECTIONS, WORKERS, ViewerServer

pytestmark = pytest.mark.slow


@contextmanager
def served(store: Path, timeout: float) -> Iterator[ViewerServer]:
    server = make_server(store, "127.0.0.1", 0, socket_timeout=timeout)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _get(port: int, path: str = "/") -> tuple[int, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        resp.read()
        return resp.status, dict(resp.getheaders())
    finally:
        conn.close()


def test_idle_connections_are_bounded_and_pages_still_load(tmp_path: Path) -> None:
    before = threading.active_count()
    with served(tmp_path, timeout=0.5) as server:
        port = server.server_address[1]
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2 * MAX_CONNECTIONS)]
        time.sleep(0.2)
        threads = threading.active_count() - before
        assert threads <= WORKERS + 1  # the pool and the accepting thread, not one per connection
        refused = 0
        for s in idle:  # beyond MAX_CONNECTIONS at once: answered 503 and closed, not held
            s.settimeout(0.01)
            with suppress(OSError):
                refused += s.recv(64).startswith(b"HTTP/1.0 503")
        assert refused > 0
        for s in idle:
            s.close()
        time.sleep(0.6)  # the idle ones left in the pool time out
        with ThreadPoolExecutor(max_workers=40) as pool:
            results = list(pool.map(lambda _: _get(port)[0], range(200)))
        assert results.count(200) == 200, {s: results.count(s) for s in set(results)}
        assert threading.active_count() - before <= WORKERS + 1 + 40


def test_a_request_line_without_a_version_frees_its_worker(tmp_path: Path) -> None:
    with served(tmp_path, timeout=0.5) as server:
        port = server.server_address[1]
        held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(WORKERS * 2)]
        for s in held:
            s.sendall(b"GET /")  # no version, no end of line: the worker waits for the rest
        start = time.monotonic()
        status, _ = _get(port)  # served once the silent ones time out
        assert status == 200 and time.monotonic() - start < 10
        for s in held:
            s.close()


def test_security_headers_are_http_headers(tmp_path: Path) -> None:
    with served(tmp_path, timeout=2) as server:
        status, headers = _get(server.server_address[1])
        missing = _get(server.server_address[1], "/nope")
    assert status == 200 and missing[0] == 404
    for h in (headers, missing[1]):
        csp = h["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp and "form-action 'self'" in csp
        assert h["X-Content-Type-Options"] == "nosniff" and h["X-Frame-Options"] == "DENY"
        assert h["Referrer-Policy"] == "no-referrer" and h["Cross-Origin-Opener-Policy"] == "same-origin"


def test_a_run_page_sends_its_own_policy_as_a_header(demo_run: Path) -> None:
    """The report page runs its script (its hash is in the policy); the header is the page's own."""
    import html
    import json
    import re

    run_id = json.loads((demo_run / "report.json").read_text())["run"]["id"]
    with served(demo_run.parents[1], timeout=2) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        conn.request("GET", f"/run/{run_id}")
        resp = conn.getresponse()
        body = resp.read().decode()
        conn.close()
    meta = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', body)
    assert resp.status == 200 and meta is not None
    policy = html.unescape(meta.group(1))
    assert resp.getheader("Content-Security-Policy") == f"{policy}; frame-ancestors 'none'"
    assert "script-src 'sha256-" in policy
