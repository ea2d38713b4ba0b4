"""The end of an eval, timed alone (prints numbers; not a test).

Workload: N samples × 2 variants run once through the built-in echo executor (answers at once) and stored;
then, ``--repeats`` times on a fresh copy of that run directory, what ``knowmeter eval`` does
after the last task: ``finalize`` (report.json built from results.jsonl, gates, decision,
index) and report.html. Prints each stage's CPU and wall seconds, fastest and median — the part
of ``bench_runner.py``'s eval / spawn-floor ratio that is not spawning.

    python bench/bench_finish.py [--samples 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instant import make_project


def stored_run(root: Path, n: int) -> Path:
    """A finished run of ``n`` samples × 2 variants in ``root`` (its run directory)."""
    import os

    import anyio

    from knowmeter.evaluation import Overrides, execute, prepare, resolve_config, run_budget, start_run
    from knowmeter.postprocess import make_post_process

    make_project(root, n)
    cwd = Path.cwd()
    os.chdir(root)
    try:
        cfg = resolve_config(
            Overrides(
                samples=["eval-samples.jsonl"],
                control="a",
                treatments=["b"],
                executor="echo",
                concurrency=8,
                no_cache=True,
            ),
            root,
        )
        prepared = prepare(cfg)
        run_dir = start_run(prepared)
        budget = run_budget(prepared)
        anyio.run(
            lambda: execute(
                prepared, run_dir, prepared.tasks, budget=budget, post_process=make_post_process(prepared, budget)
            )
        )
    finally:
        os.chdir(cwd)
    return run_dir.path


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - w0, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from knowmeter.pipeline import finalize
    from knowmeter.report import write_outputs
    from knowmeter.store import RunDir

    rows: dict[str, list[tuple[float, float]]] = {"finalize": [], "report.html": []}
    with tempfile.TemporaryDirectory() as tmp:
        original = stored_run(Path(tmp) / "project", args.samples)
        for i in range(args.repeats):
            copy = Path(tmp) / "store" / "runs" / f"copy{i}"
            shutil.copytree(original, copy)
            run_dir = RunDir(copy)
            cpu, wall, report = timed(lambda: finalize(run_dir, status="complete"))  # noqa: B023
            rows["finalize"].append((cpu, wall))
            cpu, wall, _ = timed(lambda: write_outputs(report, html=copy / "report.html"))  # noqa: B023
            rows["report.html"].append((cpu, wall))
    print(f"end of an eval of {args.samples} samples × 2 variants, {args.repeats} repeats (CPU / wall seconds)")
    for stage, values in rows.items():
        cpus, walls = [v[0] for v in values], [v[1] for v in values]
        print(
            f"  {stage:<12} fastest {min(cpus):5.2f} / {min(walls):5.2f}   median {statistics.median(cpus):5.2f} / "
            f"{statistics.median(walls):5.2f}"
        )


if __name__ == "__main__":
    main()
