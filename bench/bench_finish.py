"""The end of an eval, timed alone (prints numbers; not a test).

Workload: N samples × 2 variants run once through the built-in echo executor (answers at once) and stored;
then, ``--repeats`` times on a fresh copy of that run directory, what ``knowmeter eval`` does
after the last task: ``finalize`` (report.json built from results.jsonl, gates, decision,
index) and report.html. Prints each stage's CPU and wall seconds, fastest and median (and per
task), the records parsed from results.jsonl per finalize, and the disk bytes per task of
results.jsonl and report.json — the part of ``bench_runner.py``'s eval / spawn-floor ratio that is
not spawning.

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
    from knowmeter import jsonio
    from knowmeter.pipeline import finalize
    from knowmeter.report import write_outputs
    from knowmeter.store import RunDir, TaskRecord

    tasks = args.samples * 2
    rows: dict[str, list[tuple[float, float]]] = {"finalize": [], "report.html": []}
    loads, from_json = jsonio.loads, TaskRecord.model_validate_json
    parsed = [0]

    def counting(data: bytes | str) -> Any:
        parsed[0] += 1
        return loads(data)

    def counting_records(data: bytes | str) -> TaskRecord:  # a record parsed straight from its line
        parsed[0] += 1
        return from_json(data)

    with tempfile.TemporaryDirectory() as tmp:
        original = stored_run(Path(tmp) / "project", args.samples)
        for i in range(args.repeats):
            copy = Path(tmp) / "store" / "runs" / f"copy{i}"
            shutil.copytree(original, copy)
            run_dir = RunDir(copy)
            parsed[0] = 0
            jsonio.loads, TaskRecord.model_validate_json = counting, counting_records  # type: ignore[method-assign,assignment]
            try:
                cpu, wall, report = timed(lambda: finalize(run_dir, status="complete"))  # noqa: B023
            finally:
                jsonio.loads, TaskRecord.model_validate_json = loads, from_json  # type: ignore[method-assign]
            rows["finalize"].append((cpu, wall))
            cpu, wall, _ = timed(lambda: write_outputs(report, html=copy / "report.html"))  # noqa: B023
            rows["report.html"].append((cpu, wall))
        sizes = {name: (copy / name).stat().st_size for name in ("results.jsonl", "report.json")}
    print(f"end of an eval of {args.samples} samples × 2 variants, {args.repeats} repeats (CPU / wall seconds)")
    for stage, values in rows.items():
        cpus, walls = [v[0] for v in values], [v[1] for v in values]
        print(
            f"  {stage:<12} fastest {min(cpus):5.2f} / {min(walls):5.2f}   median {statistics.median(cpus):5.2f} / "
            f"{statistics.median(walls):5.2f}   per task (median) {statistics.median(cpus) / tasks * 1e3:.3f} / "
            f"{statistics.median(walls) / tasks * 1e3:.3f} ms"
        )
    print(f"  JSON documents parsed by the last finalize: {parsed[0]} ({parsed[0] / tasks:.2f} per task)")
    for name, size in sizes.items():
        print(f"  {name:<14} {size:>12,} bytes  {size / tasks:,.0f} bytes per task")


if __name__ == "__main__":
    main()
