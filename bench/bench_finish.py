"""The end of an eval, timed alone (prints numbers; not a test).

Part 1, the whole eval split: ``knowmeter eval --executor echo`` (the harness check: no spawning) on
N/2 samples × 2 variants for each ``--tasks`` N, ``--split-repeats`` times each, run as a child
process that marks its CPU seconds at each stage boundary (``_eval_split.py``): the interpreter,
the start-up before the first task, the runner's window, and after it every part of the finish
(report imports, the fold pass over results.jsonl, each section's statistics, gates, report.json,
the index, report.html, the terminal summary, exit). Prints each stage's median CPU seconds per
size and a least-squares fit ``fixed ms + µs a task`` over the sizes: the parent-CPU part of
``bench_runner.py``'s eval / spawn-floor ratio that is not spawning. ``--script`` runs part 1 with
``bench_runner.py``'s process-per-task script agent instead (its answers carry cost and tokens, so
the resources section has more to resample; the window then spawns).

Part 2, the finish alone: N samples × 2 variants (``--samples``) run once through the echo
executor and stored; then, ``--repeats`` times on a fresh copy of that run directory, what
``knowmeter eval`` does after the last task: ``finalize`` (report.json built from results.jsonl,
gates, decision, index) and report.html. Prints each stage's CPU and wall seconds, fastest and
median (and per task), the fold pass's parts (reading and checking results.jsonl alone —
``StoredTasks`` — and each section's ``add`` on top of it), the records parsed from results.jsonl
per finalize, and the disk bytes per task of results.jsonl and report.json.

    python bench/bench_finish.py [--tasks 2000 8000 40000] [--split-repeats 3] [--script] [--samples 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instant import make_project
from bench_runner import compile_bytecode
from bench_runner import make_project as make_script_project


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


SPLIT = Path(__file__).resolve().parent / "_eval_split.py"


def eval_split(root: Path, executor: str) -> dict[str, float]:
    """One ``knowmeter eval --executor EXECUTOR`` in ``root`` (a project): CPU seconds by stage."""
    args = ["eval", "--samples", "eval-samples.jsonl", "--control", "a", "--treatment", "b", "--executor", executor]
    done = subprocess.run(
        [sys.executable, str(SPLIT), *args, "--concurrency", "8", "--no-cache", "--report-only"],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stages: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if line.startswith("mark "):
            name, seconds = line[5:].split("\t")
            stages[name] = stages.get(name, 0.0) + float(seconds)
    return stages


def fit(sizes: list[int], values: list[float]) -> tuple[float, float]:
    """Least-squares ``fixed + per_task × size`` (seconds, seconds a task)."""
    if len(sizes) < 2:
        return values[0], 0.0
    mx, my = statistics.fmean(sizes), statistics.fmean(values)
    slope = sum((x - mx) * (y - my) for x, y in zip(sizes, values, strict=True)) / sum((x - mx) ** 2 for x in sizes)
    return my - slope * mx, slope


def split_table(sizes: list[int], repeats: int, *, script: bool) -> None:
    """Part 1: the whole eval's CPU seconds by stage, per size, and the fixed + per-task fit."""
    medians: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        projects = {}
        for n in sizes:
            projects[n] = Path(tmp) / f"p{n}"
            if script:
                make_script_project(projects[n], n // 2)
            else:
                make_project(projects[n], n // 2)
        runs: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
        for _ in range(repeats):  # sizes interleaved within each round
            for n in sizes:
                runs[n].append(eval_split(projects[n], "./agent.sh" if script else "echo"))
        for n in sizes:
            names = list(dict.fromkeys(name for r in runs[n] for name in r))
            medians[n] = {name: statistics.median(r.get(name, 0.0) for r in runs[n]) for name in names}
    names = list(dict.fromkeys(name for n in sizes for name in medians[n]))
    window = "window (evaluation.execute)"
    after = names[names.index(window) + 1 :] if window in names else []
    executor = "bench_runner.py's script agent" if script else "echo"
    print(
        f"knowmeter eval --executor {executor}, parent CPU seconds by stage (median of {repeats}; tasks = samples × 2)"
    )
    print(f"  {'stage':<52}" + "".join(f"{n:>10,}" for n in sizes) + "   fit: fixed ms + µs a task")

    def row(label: str, values: list[float]) -> None:
        fixed, per = fit(sizes, values)
        print(f"  {label:<52}" + "".join(f"{v:10.3f}" for v in values) + f"   {fixed * 1e3:7.1f} + {per * 1e6:6.2f}")

    for name in names:
        row(name, [medians[n].get(name, 0.0) for n in sizes])
    row(
        "= before the first task",
        [sum(v for k, v in medians[n].items() if names.index(k) < names.index(window)) for n in sizes],
    )
    row("= after the window", [sum(medians[n].get(k, 0.0) for k in after) for n in sizes])
    row("= whole eval", [sum(medians[n].values()) for n in sizes])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, nargs="*", default=[2000, 8000, 40000])
    ap.add_argument("--split-repeats", type=int, default=3)
    ap.add_argument("--script", action="store_true", help="part 1 with bench_runner.py's process-per-task agent")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    compile_bytecode()  # as an install does: no run pays for compiling knowmeter's modules
    if args.tasks:
        split_table(args.tasks, args.split_repeats, script=args.script)
    if args.repeats:
        finish_alone(args.samples, args.repeats)


def fold_pass(run_dir: Any, repeats: int) -> dict[str, float]:
    """CPU seconds (median of ``repeats``) of reading and checking results.jsonl alone
    (``StoredTasks``), and of each fold's ``add`` on top of that pass (the section alone)."""
    from knowmeter.pipeline import report_sections
    from knowmeter.report._summary import OperationsSummary
    from knowmeter.store import StoredTasks

    run = run_dir.read_run()
    makers: dict[str, Callable[[], Any]] = {
        "operations summary": lambda: OperationsSummary([v.name for v in run.variants])
    }
    for builder in report_sections(run=run):
        makers[type(builder(run)).__name__.strip("_").lower() + " section"] = functools.partial(builder, run)

    def median_cpu(make: Callable[[], Any] | None) -> float:
        cpus = []
        for _ in range(repeats):
            fold = make() if make is not None else None
            cpu, _, _ = timed(lambda: StoredTasks(run_dir.results_file, run, fold.add if fold is not None else None))  # noqa: B023
            cpus.append(cpu)
        return statistics.median(cpus)

    alone = median_cpu(None)
    out = {"reading + checking (StoredTasks, no fold)": alone}
    for name, make in makers.items():
        out[f"+ {name} add"] = median_cpu(make) - alone
    return out


def finish_alone(samples: int, repeats: int) -> None:
    """Part 2: finalize and report.html on copies of one stored run."""
    from knowmeter import jsonio
    from knowmeter.pipeline import finalize
    from knowmeter.report import write_outputs
    from knowmeter.store import RunDir, TaskRecord

    tasks = samples * 2
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
        original = stored_run(Path(tmp) / "project", samples)
        for i in range(repeats):
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
        folds = fold_pass(RunDir(original), repeats)
    print(f"end of an eval of {samples} samples × 2 variants, {repeats} repeats (CPU / wall seconds)")
    for stage, values in rows.items():
        cpus, walls = [v[0] for v in values], [v[1] for v in values]
        print(
            f"  {stage:<12} fastest {min(cpus):5.2f} / {min(walls):5.2f}   median {statistics.median(cpus):5.2f} / "
            f"{statistics.median(walls):5.2f}   per task (median) {statistics.median(cpus) / tasks * 1e3:.3f} / "
            f"{statistics.median(walls) / tasks * 1e3:.3f} ms"
        )
    print("  the fold pass over results.jsonl (CPU seconds, median; per task):")
    for name, cpu in folds.items():
        print(f"    {name:<44} {cpu:5.3f}  {cpu / tasks * 1e6:6.1f} µs a task")
    print(f"  JSON documents parsed by the last finalize: {parsed[0]} ({parsed[0] / tasks:.2f} per task)")
    for name, size in sizes.items():
        print(f"  {name:<14} {size:>12,} bytes  {size / tasks:,.0f} bytes per task")


if __name__ == "__main__":
    main()
