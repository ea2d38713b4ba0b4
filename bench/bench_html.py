"""HTML report benchmark (prints numbers; not a test).

Workload: the run of ``bench/bench_runner.py`` — 2,000 samples × 2 variants through the instant
script executor — evaluated once by ``knowmeter eval`` (which writes report.html). Then, from the
stored report.json: the page's size, the time to render and write it (best of ``--repeats``),
and the time until the page is interactive in headless Chromium (navigation start to the page
script's ``data-ready`` mark, which it sets after the first 200 sample rows are in the table).
Targets: ≤ 5 MB, written in ≤ 1 s, interactive in ≤ 2 s.

    python bench/bench_html.py [--samples 2000] [--repeats 3] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import cpu_reference
from bench_runner import eval_args, make_project

from knowmeter.report import read_report
from knowmeter.report.html import write_html


def evaluate(root: Path, agent: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "knowmeter",
            *eval_args(agent),
        ],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return sorted((root / ".knowmeter" / "runs").iterdir())[-1]


def interactive_s(page_file: Path, chromium: str, repeats: int) -> float | None:
    """Best of ``repeats``: navigation start to the page's ready mark, in a fresh page each time."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    best = float("inf")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for _ in range(repeats):
            page = browser.new_page()
            page.goto(page_file.as_uri())
            page.wait_for_selector("body[data-ready]", timeout=60_000)
            ready_ms = page.evaluate("performance.now()")  # measured from this page's navigation start
            best = min(best, ready_ms / 1000)
            page.close()
        browser.close()
    return best


def template_load_s() -> tuple[float, float]:
    """Seconds to get the report template in a new process: compiled (Jinja's bytecode cache
    empty, as on a machine's first report), then loaded from that cache (every later report)."""
    from knowmeter.report.html import _page

    with tempfile.TemporaryDirectory() as cache_dir:
        _page._template_cache = lambda: _page._TemplateCache(cache_dir)
        times = []
        for _ in range(2):
            _page.environment.cache_clear()  # as a new process starts
            t0 = time.perf_counter()
            _page.environment().get_template("report.html.j2")
            times.append(time.perf_counter() - t0)
    return times[0], times[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    print(f"cpu reference before: {cpu_reference():.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent = make_project(root, args.samples)
        run = evaluate(root, agent)
        t0 = time.perf_counter()
        report = read_report(run / "report.json", run.name)
        read_s = time.perf_counter() - t0
        out = run / "bench.html"
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            write_html(report, out)
            best = min(best, time.perf_counter() - t0)
        size = out.stat().st_size
        print(
            f"workload: {args.samples} samples × 2 variants = {len(report.tasks or [])} tasks; "
            f"report.json {(run / 'report.json').stat().st_size / 1e6:.2f} MB, read into a Report in {read_s:.3f} s"
        )
        print(f"report.html:   {size / 1e6:6.2f} MB   (target ≤ 5 MB)")
        print(f"render+write:  {best:6.3f} s    (best of {args.repeats}; target ≤ 1 s)")
        compiled, cached = template_load_s()
        print(f"template:      {compiled:6.3f} s compiled, {cached:.4f} s from Jinja's bytecode cache (per process)")
        ready = interactive_s(out, args.chromium, args.repeats) if Path(args.chromium).is_file() else None
        print(
            "interactive:   "
            + (
                "unknown (no chromium or playwright)"
                if ready is None
                else f"{ready:6.3f} s    (headless chromium, best of {args.repeats}; target ≤ 2 s)"
            )
        )
    print(f"cpu reference after:  {cpu_reference():.2f} s")


if __name__ == "__main__":
    main()
