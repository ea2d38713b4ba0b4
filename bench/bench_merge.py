"""Merge benchmark (prints numbers; not a test).

Workload: a plan of N samples × 2 variants run as S shards (``--shard I/S``) through
bench_memory's echo executor, then merged. Measured in a child process of its own:
the merge of the shards' files (``merge_shards``: check the plan, read every result, refuse a task present
twice, write one results.jsonl and run.json), then the merged run's report (``finalize``:
comparison with B = 10,000 bootstrap resamples, verdict, gaps, index), then ``knowmeter merge``
end to end as a user runs it (+ report.html and the terminal summary), with its peak RSS.

    python bench/bench_merge.py [--samples 2000 6000] [--shards 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instant import make_project
from _machine import cpu_reference
from bench_memory import EVAL, child

#: bench_memory's eval of the plan, cut to the shard given as its argument, with the default B = 10,000
SHARD = "import sys\n" + EVAL.replace("bootstrap_samples=1000)", "shard=sys.argv[1])")
assert SHARD != EVAL, "bench_memory.EVAL changed: update the shard argument here"

#: the merge and the merged run's report, timed apart (wall and this process's CPU)
MERGE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from knowmeter.pipeline import finalize
    from knowmeter.store import find_run
    from knowmeter.store._merge import merge_shards

    store = Path(".knowmeter")
    c0, t0 = time.process_time(), time.perf_counter()
    merged, _ = merge_shards([find_run(store, r) for r in sys.argv[1:]], Path("merged") / "runs")
    c1, t1 = time.process_time(), time.perf_counter()
    finalize(merged, status="complete")
    c2, t2 = time.process_time(), time.perf_counter()
    size = merged.results_file.stat().st_size / 1e6
    print(f"{t1 - t0:.3f} {c1 - c0:.3f} {t2 - t1:.3f} {c2 - c1:.3f} {size:.1f}")
""")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, nargs="+", default=[2000, 6000])
    ap.add_argument("--shards", type=int, default=3)
    args = ap.parse_args()
    print(f"cpu reference before: {cpu_reference():.2f} s (lower is faster)")
    for n in sorted(args.samples):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            make_project(root, n)
            shards = []
            for i in range(1, args.shards + 1):
                _, _, out = child([sys.executable, "-c", SHARD, f"{i}/{args.shards}"], root)
                shards.append(out.split()[-1])
            tasks = n * 2
            _, rss, out = child([sys.executable, "-c", MERGE, *shards], root)
            merge_wall, merge_cpu, report_wall, report_cpu, size = map(float, out.split())
            print(
                f"{n:>6} samples × 2 variants = {tasks} tasks in {args.shards} shards: merge {merge_wall:6.2f} s "
                f"wall / {merge_cpu:6.2f} s CPU ({tasks / merge_wall:,.0f} tasks/s, results {size:.1f} MB); "
                f"report of the merged run {report_wall:6.2f} s wall / {report_cpu:6.2f} s CPU; "
                f"peak RSS {rss:.0f} MB"
            )
            wall, rss, _ = child(
                [sys.executable, "-m", "knowmeter", "merge", *shards, "--into", "cli", "--report-only"], root
            )
            print(
                f"{n:>6} samples: knowmeter merge end to end (merge + report.json + report.html + summary) "
                f"{wall:6.2f} s wall, peak RSS {rss:.0f} MB"
            )
    print(f"cpu reference after: {cpu_reference():.2f} s")


if __name__ == "__main__":
    main()
