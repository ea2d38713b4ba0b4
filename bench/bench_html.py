"""HTML report benchmark (prints numbers; not a test).

Workload: 5,000 samples × 2 variants × 3 repeats (30,000 tasks) with realistic traces — 10–30 tool
calls a task, a few hundred characters per tool result (``_traced.py``) — evaluated in-process by
``knowmeter.evaluate`` in a child process. Then, from the stored report.json: the page's size, the
time to render and write it, and in headless Chromium (best of ``--repeats`` fresh pages): the time
until the page is interactive (navigation start to the page script's ``data-ready`` mark), opening a
row (click to the next frame painted), changing a filter, and each key typed in the search box.
Targets (issue 33): ≤ 5 MB, interactive ≤ 1.5 s, a row or a filter ≤ 200 ms, a key ≤ 100 ms.
The page embeds the detail of some rows; ``knowmeter view`` searches all of them: its index of this
run (built once per run) and each search of ``_searches.py`` on it, best of ``--repeats`` (target
≤ 300 ms; ``bench_viewer.py`` times the same over HTTP).

    python bench/bench_html.py [--samples 5000] [--repeat 3] [--repeats 3] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import cpu_reference
from _searches import SEARCHES
from _traced import EVAL, make_project

from knowmeter.report import Report, read_report, write_outputs

#: the next frame after an action: the action's handler, layout and paint are done
NEXT_FRAME = "new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))"

OPEN_ROW = f"""async () => {{
  const t0 = performance.now();
  document.querySelector('#sample-body tr.row').click();
  await {NEXT_FRAME};
  return performance.now() - t0;
}}"""

FILTER = f"""async () => {{
  const s = document.getElementById('f-status'), t0 = performance.now();
  s.value = 'fail'; s.dispatchEvent(new Event('change'));
  await {NEXT_FRAME};
  return performance.now() - t0;
}}"""

TYPE = f"""async (word) => {{
  const box = document.getElementById('f-text'), times = [];
  for (const ch of word) {{
    const t0 = performance.now();
    box.value += ch; box.dispatchEvent(new Event('input'));
    await {NEXT_FRAME};
    times.push(performance.now() - t0);
  }}
  return times;
}}"""


def evaluate(root: Path, repeat: int) -> Path:
    bench = str(Path(__file__).resolve().parent)
    subprocess.run([sys.executable, "-c", EVAL, bench, str(repeat)], cwd=root, check=True, stdout=subprocess.DEVNULL)
    return sorted((root / ".knowmeter" / "runs").iterdir())[-1]


def browser_times(page_file: Path, chromium: str, repeats: int) -> dict[str, float] | None:
    """Best of ``repeats`` fresh pages: seconds to interactive, ms to open a row, to change a
    filter, and the median and slowest key typed in the search box."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    best: dict[str, float] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for _ in range(repeats):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_file.as_uri())
            page.wait_for_selector("body[data-ready]", timeout=60_000)
            ready_s = page.evaluate("performance.now()") / 1000
            row_ms, filter_ms = page.evaluate(OPEN_ROW), page.evaluate(FILTER)
            page.select_option("#f-status", "")
            keys = page.evaluate(TYPE, "refund window")
            got = {
                "ready_s": ready_s,
                "row_ms": row_ms,
                "filter_ms": filter_ms,
                "key_median_ms": statistics.median(keys),
                "key_max_ms": max(keys),
            }
            best = {k: min(v, best.get(k, v)) for k, v in got.items()}
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


def search_figures(report: Report, repeats: int) -> None:
    """Print the viewer's index build and search times over every row of ``report``."""
    from urllib.parse import parse_qs

    from knowmeter.report import ReportView
    from knowmeter.viewer._search import RunIndex, parse_query

    t0 = time.perf_counter()
    index = RunIndex.build(ReportView(report))
    print(f"view index:    {time.perf_counter() - t0:6.2f} s to build ({len(index.rows)} rows; once per run)")
    for name, query in SEARCHES:
        parsed = parse_query(parse_qs(query))
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            found = index.search(parsed)
            times.append(time.perf_counter() - t0)
        answer = f"{found['matched']} rows match; target ≤ 300 ms"
        print(f"  {name:20} {1000 * min(times):7.1f} ms best of {repeats} ({answer})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3, help="repeats per sample and variant in the run")
    ap.add_argument("--repeats", type=int, default=3, help="browser measurements (best of)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    print(f"cpu reference before: {cpu_reference():.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, args.samples)
        t0 = time.perf_counter()
        run = evaluate(root, args.repeat)
        eval_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = read_report(run / "report.json", run.name)
        read_s = time.perf_counter() - t0
        out = run / "bench.html"
        t0 = time.perf_counter()
        write_outputs(report, html=out)
        write_s = time.perf_counter() - t0
        size = out.stat().st_size
        print(
            f"workload: {args.samples} samples × 2 variants × {args.repeat} repeats = {len(report.tasks or [])} tasks "
            f"(10–30 tool calls each), evaluated in {eval_s:.0f} s; report.json "
            f"{(run / 'report.json').stat().st_size / 1e6:.0f} MB, read into a Report in {read_s:.1f} s"
        )
        print(f"report.html:   {size / 1e6:6.2f} MB   (target ≤ 5 MB)")
        print(f"render+write:  {write_s:6.2f} s")
        search_figures(report, args.repeats)
        compiled, cached = template_load_s()
        print(f"template:      {compiled:6.3f} s compiled, {cached:.4f} s from Jinja's bytecode cache (per process)")
        got = browser_times(out, args.chromium, args.repeats) if Path(args.chromium).is_file() else None
        if got is None:
            print("browser:       unknown (no chromium or playwright)")
        else:
            best = f"headless chromium, best of {args.repeats}"
            print(f"interactive:   {got['ready_s']:6.3f} s    ({best}; target ≤ 1.5 s)")
            print(f"open a row:    {got['row_ms']:6.1f} ms   (click to next frame; target ≤ 200 ms)")
            print(f"change filter: {got['filter_ms']:6.1f} ms   (target ≤ 200 ms)")
            print(
                f"search key:    {got['key_median_ms']:6.1f} ms median, {got['key_max_ms']:.1f} ms slowest of 13 keys "
                "(target ≤ 100 ms)"
            )
    print(f"cpu reference after:  {cpu_reference():.2f} s")


if __name__ == "__main__":
    main()
