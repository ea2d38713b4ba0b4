"""The viewer's HTTP server: GET (and HEAD) only, fixed routes. A URL never names a file: a run is
looked up by its exact id in the index. Requests whose Host is not the address served (a
DNS-rebinding page) are refused when bound to loopback.

It holds under load: a fixed pool of ``WORKERS`` threads serves the connections, at most
``MAX_CONNECTIONS`` are open at once (one more is answered 503 and closed at once), every
socket times out after ``SOCKET_TIMEOUT_S`` without data (a client that sends half a request
frees its worker), and the listen backlog is ``BACKLOG``. Pages carry their Content-Security-Policy
and the other security headers as HTTP headers."""

from __future__ import annotations

import re
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import orjson
from markupsafe import escape

from knowmeter import defaults
from knowmeter._secrets import scrub
from knowmeter.errors import InputError
from knowmeter.report import Report, ReportView
from knowmeter.report.html import assets
from knowmeter.store import RUN_ID
from knowmeter.viewer._data import Store, UnreadableIndex
from knowmeter.viewer._pages import CSP, compare_csp, compare_page, error_page, runs_page, trends_page
from knowmeter.viewer._search import IndexCache, RunIndex, parse_query

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
#: a run's report links back to the viewer's pages
VIEWER_LINKS = (("/", "Runs"), ("/trends", "Trends"))


#: a run's page and its answers: /run/RUN, /run/RUN/rows?… (search), /run/RUN/row?sample=…&repeat=…
RUN_PATH = re.compile(r"^/run/(?P<run>[^/]*)(?:/(?P<api>rows|row))?$")
JSON = "application/json"
HTML = "text/html; charset=utf-8"


class _Reply(Exception):
    def __init__(self, status: HTTPStatus, message: str, *, json: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.json = json


@dataclass(frozen=True)
class _Answer:
    body: str
    csp: str = CSP
    content_type: str = HTML


def viewer_csp() -> str:
    """The report page's policy as the viewer serves it: its script may ask this viewer (and
    nothing else) for the rows the page does not hold."""
    return assets()[2].replace("connect-src 'none'", "connect-src 'self'")


#: threads serving requests; connections open at once (served or waiting for a thread)
WORKERS = 16
MAX_CONNECTIONS = 256
#: seconds a socket may stay without data before the connection is dropped
SOCKET_TIMEOUT_S = 10.0
#: connections the OS queues before the server accepts them
BACKLOG = 128
_BUSY = b"HTTP/1.0 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class ViewerServer(HTTPServer):
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], store: Store, *, socket_timeout: float = SOCKET_TIMEOUT_S) -> None:
        # made first: a failed bind in HTTPServer.__init__ calls server_close
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="knowmeter-view")
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, Handler)
        self.store = store
        self.indexes = IndexCache()
        self.loopback = address[0] in LOOPBACK
        self.socket_timeout = socket_timeout

    def process_request(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        """Hand the connection to the pool, or answer 503 when ``MAX_CONNECTIONS`` are open."""
        if not self._slots.acquire(blocking=False):
            try:
                request.settimeout(0.5)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        self._pool.submit(self._serve_one, request, client_address)

    def _serve_one(self, request: socket.socket, client_address: object) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"


class Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    server_version = "knowmeter-view"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.socket_timeout)  # a silent client frees its worker

    def log_message(self, format: str, *args: object) -> None:
        pass  # the terminal stays quiet; the page shows what went wrong

    def _send(self, status: HTTPStatus, answer: _Answer, *, head: bool = False) -> None:
        """Send ``answer`` with the security headers; its ``csp`` is the page's own policy (as in its
        ``<meta>``), sent as a header too, with ``frame-ancestors`` (which a ``<meta>`` cannot set)."""
        data = scrub(answer.body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Content-Security-Policy", f"{answer.csp}; frame-ancestors 'none'")
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        if status == HTTPStatus.METHOD_NOT_ALLOWED:
            self.send_header("Allow", "GET, HEAD")
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def _route(self) -> _Answer:
        """The answer at the request's path."""
        if self.server.loopback:
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
            if host not in LOOPBACK:
                raise _Reply(HTTPStatus.FORBIDDEN, "this viewer only answers requests addressed to this machine")
        parts = urlsplit(self.path)
        path = parts.path
        store = self.server.store
        if path == "/":
            return _Answer(runs_page(store.runs()))
        if path == "/trends":
            return _Answer(trends_page(store.history()))
        run = RUN_PATH.fullmatch(path)
        if run is not None and run["api"]:
            return self._run_api(run["run"], run["api"], parts.query)
        if run is not None:
            return _Answer(self._run_page(run["run"]), viewer_csp())  # the report's, with its script
        if path == "/activation" or path.startswith("/activation/"):
            return _Answer(self._activation_page(path.removeprefix("/activation").removeprefix("/")))
        if path == "/compare":
            query = self._query(parts.query, 4, "use /compare?a=RUN&b=RUN")
            ids = [(query.get(k) or [""])[0] for k in ("a", "b")]
            if not all(ids):
                raise _Reply(HTTPStatus.BAD_REQUEST, "compare needs two runs: /compare?a=RUN&b=RUN")
            a, b = (self._report(i) for i in ids)
            return _Answer(compare_page((ids[0], a), (ids[1], b)), compare_csp())
        raise _Reply(HTTPStatus.NOT_FOUND, "no such page")

    @staticmethod
    def _query(query: str, fields: int, usage: str, *, json: bool = False) -> dict[str, list[str]]:
        try:
            return parse_qs(query, keep_blank_values=True, strict_parsing=bool(query), max_num_fields=fields)
        except ValueError:
            raise _Reply(HTTPStatus.BAD_REQUEST, f"malformed query: {usage}", json=json) from None

    def _report(self, run_id: str, *, json: bool = False) -> Report:
        try:
            report = self.server.store.report(run_id) if RUN_ID.fullmatch(run_id) else None
        except InputError as exc:
            raise _Reply(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc), json=json) from None
        if report is None:
            raise _Reply(HTTPStatus.NOT_FOUND, "no such run with a report in this store", json=json)
        return report

    def _index(self, run_id: str) -> RunIndex:
        """The run's search index, built at its first search and kept while its files stay the same."""
        stamp = self.server.store.stamp(run_id) if RUN_ID.fullmatch(run_id) else None
        if stamp is None:
            raise _Reply(HTTPStatus.NOT_FOUND, "no such run with a report in this store", json=True)
        return self.server.indexes.get(
            run_id, stamp, lambda: RunIndex.build(ReportView(self._report(run_id, json=True)))
        )

    def _run_api(self, run_id: str, api: str, raw_query: str) -> _Answer:
        """A search over every row of the run (``rows``), or one row's detail (``row``), as JSON."""
        if api == "rows":
            query = self._query(raw_query, 12, "use /run/RUN/rows?q=TEXT&status=…", json=True)
            try:
                found = self._index(run_id).search(parse_query(query))
            except ValueError as exc:
                raise _Reply(HTTPStatus.BAD_REQUEST, str(exc), json=True) from None
            return _Answer(orjson.dumps(found).decode(), content_type=JSON)
        query = self._query(raw_query, 2, "use /run/RUN/row?sample=ID&repeat=N", json=True)
        sample, repeat = (query.get(k, [""])[0] for k in ("sample", "repeat"))
        if not repeat.isdigit():
            raise _Reply(HTTPStatus.BAD_REQUEST, "a row is named by ?sample=ID&repeat=N", json=True)
        detail = self._index(run_id).detail(sample, int(repeat))
        if detail is None:
            raise _Reply(HTTPStatus.NOT_FOUND, f"no row of sample {sample!r}, repeat {repeat} in this run", json=True)
        return _Answer(detail.decode(), content_type=JSON)

    def _run_page(self, run_id: str) -> str:
        """The run's stored report.html (no task record read), or, when it is stale, missing or from
        another version, the page rendered from report.json; with the viewer's links in its nav, the
        address its script searches every row at, and the viewer's policy (:func:`viewer_csp`)."""
        from knowmeter.report.html import render_html

        page = self.server.store.stored_page(run_id, assets()[2]) if RUN_ID.fullmatch(run_id) else None
        if page is None:
            page = render_html(self._report(run_id))
        links = "".join(f'<a href="{escape(href)}">{escape(text)}</a>' for href, text in VIEWER_LINKS)
        page = page.replace("<nav>", f'<nav data-api="/run/{escape(run_id)}">{links}', 1)
        return page.replace(str(escape(assets()[2])), str(escape(viewer_csp())), 1)

    def _activation_page(self, run_id: str) -> str:
        """The activation runs (``/activation``) or one run's page (``/activation/RUN``)."""
        from knowmeter.activation import html_report, runs_index_html

        reports = self.server.store.activation_reports()
        if not run_id:
            return runs_index_html(reports)
        found = next((r for r in reports if r.run_id == run_id), None)
        if found is None:
            raise _Reply(HTTPStatus.NOT_FOUND, "no such activation run with a report in this store")
        return html_report(found)

    def _serve(self, *, head: bool) -> None:
        try:
            answer = self._route()
        except _Reply as reply:
            self._send(reply.status, self._error(reply.status, reply.message, json=reply.json), head=head)
        except UnreadableIndex as exc:
            status = HTTPStatus.SERVICE_UNAVAILABLE
            self._send(status, self._error(status, str(exc)), head=head)
        else:
            self._send(HTTPStatus.OK, answer, head=head)

    @staticmethod
    def _error(status: HTTPStatus, message: str, *, json: bool = False) -> _Answer:
        if json:
            return _Answer(orjson.dumps({"error": message}).decode(), content_type=JSON)
        return _Answer(error_page(int(status), message))

    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def _refuse(self) -> None:
        self._send(
            HTTPStatus.METHOD_NOT_ALLOWED,
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, "the viewer is read-only: GET only"),
        )

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _refuse


def make_server(
    output_dir: Path,
    host: str = defaults.VIEWER_HOST,
    port: int = defaults.VIEWER_PORT,
    *,
    socket_timeout: float = SOCKET_TIMEOUT_S,
) -> ViewerServer:
    """A viewer over the runs in ``output_dir`` (not started: call ``serve_forever``)."""
    return ViewerServer((host, port), Store(output_dir), socket_timeout=socket_timeout)
