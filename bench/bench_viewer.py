"""Viewer benchmark (prints numbers; not a test).

Workload: ``--samples`` samples × 2 variants (40,000 tasks by default) with realistic traces
(``_traced.py``: 10–30 tool calls a task), evaluated in-process in a child process, then its
report.html written as ``knowmeter eval`` writes it. Measured: the viewer's answer to
``GET /run/RUN`` over HTTP (request sent to last byte read; a fresh server, then best of
``--repeats``), and, for comparison, what a page rendered from report.json costs (read and
validate every task record, render) — what the viewer did on every request before issue 33.
Target: ≤ 1 s per view. Then the viewer's search over every row of the run (``GET /run/RUN/rows``):
the first search (which builds the run's index), then each of ``SEARCHES`` best of ``--repeats``
(target ≤ 300 ms), and a row's detail fetched on demand (``GET /run/RUN/row``).

    python bench/bench_viewer.py [--samples 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import http.client
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import cpu_reference
from _searches import SEARCHES
from _traced import EVAL, make_project

from knowmeter.report import read_report, write_outputs
from knowmeter.report.html import render_html
from knowmeter.viewer import make_server


def get_s(port: int, path: str) -> tuple[float, int, int]:
    """Seconds from the request sent to the last byte read, the status and the body's size."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    elapsed = time.perf_counter() - t0
    conn.close()
    return elapsed, resp.status, len(body)


def search_figures(port: int, run_id: str, repeats: int) -> None:
    """Print the viewer's search times over every row of the run."""
    first, status, size = get_s(port, f"/run/{run_id}/rows?q=refund")
    print(f"first search:   {first:6.3f} s (builds the run's index; HTTP {status}, {size / 1e3:.0f} kB)")
    for name, query in SEARCHES:
        best = min(get_s(port, f"/run/{run_id}/rows?{query}")[0] for _ in range(repeats))
        _, status, size = get_s(port, f"/run/{run_id}/rows?{query}")
        answer = f"HTTP {status}, {size / 1e3:.0f} kB; target ≤ 300 ms"
        print(f"  {name:20} {1000 * best:7.1f} ms best of {repeats} ({answer})")
    row = min(get_s(port, f"/run/{run_id}/row?sample=1234&repeat=0")[0] for _ in range(repeats))
    print(f"  {'a row on demand':20} {1000 * row:7.1f} ms best of {repeats}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"cpu reference before: {cpu_reference():.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, args.samples)
        bench = str(Path(__file__).resolve().parent)
        subprocess.run([sys.executable, "-c", EVAL, bench, "1"], cwd=root, check=True, stdout=subprocess.DEVNULL)
        run = sorted((root / ".knowmeter" / "runs").iterdir())[-1]
        t0 = time.perf_counter()
        report = read_report(run / "report.json", run.name)
        read_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        render_html(report)
        render_s = time.perf_counter() - t0
        write_outputs(report, html=run / "report.html")
        del report
        print(
            f"workload: {args.samples} samples × 2 variants = {2 * args.samples} tasks (10–30 tool calls each); "
            f"report.json {(run / 'report.json').stat().st_size / 1e6:.0f} MB"
        )
        parts = f"read and validate {read_s:.2f} s, render {render_s:.2f} s"
        print(f"page from report.json: {read_s + render_s:6.2f} s ({parts})")
        server = make_server(root / ".knowmeter", "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        try:
            port = server.server_address[1]
            first, status, size = get_s(port, f"/run/{run.name}")
            best = min(get_s(port, f"/run/{run.name}")[0] for _ in range(args.repeats))
            answer = f"HTTP {status}, {size / 1e6:.2f} MB; target ≤ 1 s"
            print(f"viewer GET /run: {first:6.3f} s first, {best:.3f} s best of {args.repeats} ({answer})")
            search_figures(port, run.name, args.repeats)
        finally:
            server.shutdown()
            server.server_close()
    print(f"cpu reference after:  {cpu_reference():.2f} s")


if __name__ == "__main__":
    main()
