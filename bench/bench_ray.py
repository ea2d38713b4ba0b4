"""Ray backend benchmark (prints numbers; not a test) — the figures design/scaling.md rests on.

Workload: 2,000 samples × 2 variants = 4,000 tasks with the built-in echo executor (no
agent: what is measured is knowmeter's own per-task cost), grading and analysis on, no cache,
concurrency 16. Runs it with the local backend and with ``--backend ray`` on a local Ray
instance (``--ray-cpus`` CPUs, loopback), each in a fresh child process, and prints tasks/s and
the driver's CPU seconds per task (the driver process's own CPU: event loop, grading, results
file, and for Ray its core-worker threads; not the Ray workers' or raylet's). Ray's start-up is
timed apart and left out. Then the primitives a single driver serialises per task: one
``results.jsonl`` append (flushed), one response-cache get + put (SQLite, batched commits), and
the per-run SQLite index upsert.

    python bench/bench_ray.py [--samples 2000] [--ray-cpus 2] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instant import make_project
from _machine import cpu_reference

BENCH = Path(__file__).resolve().parent

DRIVER = textwrap.dedent("""
    import json, os, sys, time
    sys.path.insert(0, {bench!r})
    backend_name, cpus, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    startup = 0.0
    if backend_name == "ray":
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # loopback, as knowmeter's own local instance
        import ray
        t0 = time.perf_counter()
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                 runtime_env={{"env_vars": {{"PYTHONPATH": {bench!r}}}}})
        startup = time.perf_counter() - t0
    import anyio
    from pathlib import Path
    from knowmeter.evaluation import Overrides, execute, prepare, resolve_config, run_budget, start_run
    from knowmeter.pipeline import finalize
    from knowmeter.postprocess import make_post_process
    from knowmeter.runner import open_backend

    cfg = resolve_config(Overrides(samples=["eval-samples.jsonl"], control="a", treatments=["b"],
                                   executor="echo", concurrency=concurrency, no_cache=True), Path.cwd())
    prepared = prepare(cfg)
    run_dir = start_run(prepared)
    backend = open_backend(backend_name)
    budget = run_budget(prepared)
    cpu0, t0 = time.process_time(), time.perf_counter()
    stats, _ = anyio.run(lambda: execute(prepared, run_dir, prepared.tasks, budget=budget, backend=backend,
                                         post_process=make_post_process(prepared, budget)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    t0 = time.perf_counter()
    finalize(run_dir, status="complete", wall_s=wall, budget=budget.to_dict())
    report = time.perf_counter() - t0
    print(json.dumps({{"done": stats.done, "errors": stats.errors, "wall": wall, "cpu": cpu, "startup": startup,
                      "report": report}}))
""")

PRIMITIVES = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from knowmeter.executors import ExecResult
    from knowmeter.runner import ResponseCache
    from knowmeter.report import index_rows, read_report
    from knowmeter.store import ResultsWriter, open_index, upsert_run

    n = int(sys.argv[1])
    record = json.loads(Path("record.json").read_text())
    t0 = time.perf_counter()
    with ResultsWriter(Path("append.jsonl")) as writer:
        for i in range(n):
            record["task_id"] = f"s{i}::a::r0"
            writer.append(record)
    append = (time.perf_counter() - t0) / n
    cache = ResponseCache(Path("cache"))
    result = ExecResult.from_dict(record["exec"])
    t0 = time.perf_counter()
    for i in range(n):
        key = f"{i:064x}"
        cache.get(key)
        cache.put(key, result)
    cache.close()
    cached = (time.perf_counter() - t0) / n
    run, variants = index_rows(read_report(Path("report.json"), "bench"), Path("run"))
    t0 = time.perf_counter()
    runs = 200
    for i in range(runs):
        with open_index(Path("store")) as conn:
            upsert_run(conn, {**run, "id": f"r{i}"}, [{**v, "run_id": f"r{i}"} for v in variants])
    upsert = (time.perf_counter() - t0) / runs
    print(json.dumps({"append_s": append, "cache_s": cached, "upsert_s": upsert,
                      "record_bytes": len(json.dumps(record))}))
""")


def drive(root: Path, backend: str, cpus: int, concurrency: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", DRIVER.format(bench=str(BENCH)), backend, str(cpus), str(concurrency)],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--ray-cpus", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    tasks = args.samples * 2
    reference_before = cpu_reference()
    with tempfile.TemporaryDirectory() as tmp:
        rows = {}
        for backend in ("local", "ray"):
            root = Path(tmp) / backend
            make_project(root, args.samples)
            rows[backend] = drive(root, backend, args.ray_cpus, args.concurrency)
        results = next((Path(tmp) / "local" / ".knowmeter" / "runs").glob("*/results.jsonl"))
        prim_dir = Path(tmp) / "primitives"
        prim_dir.mkdir()
        (prim_dir / "record.json").write_text(results.read_text().splitlines()[0])
        (prim_dir / "report.json").write_text((results.parent / "report.json").read_text())
        prim = json.loads(
            subprocess.run(
                [sys.executable, "-c", PRIMITIVES, str(tasks)], cwd=prim_dir, check=True, capture_output=True, text=True
            ).stdout
        )
    reference_after = cpu_reference()
    print(
        f"workload: {args.samples} samples × 2 variants = {tasks} tasks, echo executor, grading + analysis, "
        f"no cache, concurrency {args.concurrency}"
    )
    for backend, r in rows.items():
        assert r["done"] == tasks and r["errors"] == 0, r
        label = "local backend" if backend == "local" else f"ray backend ({args.ray_cpus} CPUs, local instance)"
        print(
            f"{label:38s} {r['wall']:7.2f} s  {tasks / r['wall']:7.0f} tasks/s   driver CPU "
            f"{1000 * r['cpu'] / tasks:6.2f} ms/task"
        )
    print(f"ray start-up (not included above):     {rows['ray']['startup']:7.2f} s")
    print(f"end of run (report.json from results.jsonl + index), local run: {rows['local']['report']:.2f} s")
    print(
        f"per task, serialised in the driver: results.jsonl append {1e6 * prim['append_s']:.0f} µs "
        f"({prim['record_bytes']} B record), response cache get+put {1e6 * prim['cache_s']:.0f} µs; "
        f"per run: SQLite index upsert {1000 * prim['upsert_s']:.1f} ms"
    )
    print(
        f"CPU speed reference (bench/_machine.py, lower is faster): {reference_before:.3f} s before, "
        f"{reference_after:.3f} s after"
    )


if __name__ == "__main__":
    main()
