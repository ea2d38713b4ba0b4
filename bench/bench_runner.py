"""Runner benchmark (prints numbers; not a test).

Workload: 2,000 samples × 2 variants, an instant shell-script executor (omk script protocol),
concurrency 8, no judge. Measures knowmeter's wall time, tasks/s and peak RSS (the eval runs as
a child process, so its ru_maxrss is its own), and — in the same run, on the same machine — the
bare process-spawn floor: the same script spawned 4,000 times, 8 at a time, with nothing else
done — measured two ways: with asyncio's ``create_subprocess_exec`` + ``communicate`` (the standard
library's way) and with knowmeter's own ``run_command`` (prefilled stdin pipe, pidfd exit; what
the script executor uses). The first is the floor the target is stated against; the second
shows what grading, analysis, storage and the report cost on top of spawning alone. Then the
same workload with an in-process executor (no spawning) for the runner's own overhead. Each
floor's parent CPU is printed too (this VM's wall times vary by ±30 % between identical runs).
The eval's own execution window (run.json's ``wall_s``: the runner alone, without start-up,
planning and the report) is printed beside its whole wall time.
Targets: wall ≤ 1.3 × spawn floor, peak RSS ≤ 150 MB, in-process ≥ 500 tasks/s.

    python bench/bench_runner.py [--samples 2000] [--repeats 3] [--budget-usd 1000] [--cpu-neighbour]

``--cpu-neighbour`` keeps one CPU-bound process (``while 1: pass``) running through every round: a
loaded machine, as a shared CI runner is (the target there is ≤ 1.5 × the floor).

``--budget-usd`` runs the eval with a budget total (never reached: the script reports $0), so the
budget's ledger (``budget.jsonl``: a line fsynced before each call starts and one when it ends)
is timed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import IO

from knowmeter.executors._spawn import run_command, use_pidfd_child_watcher

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import cpu_reference

SCRIPT = '#!/bin/sh\ncat >/dev/null\necho \'{"output":"ok","costUSD":0,"inputTokens":1,"outputTokens":1}\'\n'


def make_project(root: Path, n: int) -> Path:
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "a.md").write_text("Skill A.\n")
    (root / "skills" / "b.md").write_text("Skill B.\n")
    agent = root / "agent.sh"
    agent.write_text(SCRIPT)
    agent.chmod(0o755)
    with (root / "eval-samples.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(
                json.dumps(
                    {
                        "sample_id": f"s{i:05d}",
                        "prompt": f"question {i}",
                        "assertions": [{"type": "contains", "value": "ok"}],
                    }
                )
                + "\n"
            )
    return agent


PAYLOAD = b'{"model":null,"system":"x","prompt":"y"}'


async def spawn_floor(agent: Path, count: int, concurrency: int, *, lean: bool) -> tuple[float, float]:
    """Wall seconds and parent CPU seconds of spawning ``agent`` ``count`` times, ``concurrency``
    at a time, feeding it the payload and reading its stdout — nothing else."""
    sem = asyncio.Semaphore(concurrency)

    async def one(err: IO[bytes]) -> None:
        async with sem:
            if lean:
                await run_command([str(agent)], PAYLOAD, cwd=None, env=None, stderr=err)
            else:
                proc = await asyncio.create_subprocess_exec(
                    str(agent), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err
                )
                await proc.communicate(PAYLOAD)

    with tempfile.TemporaryFile() as err:
        cpu, t0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(err) for _ in range(count)))
        return time.perf_counter() - t0, time.process_time() - cpu


#: ``knowmeter eval`` as ``python -m knowmeter`` runs it, printing its own CPU seconds (its agents
#: excluded) to stderr on the way out.
EVAL = textwrap.dedent("""
    import atexit, resource, sys
    def own_cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        print(f"own-cpu {r.ru_utime + r.ru_stime}", file=sys.stderr)
    atexit.register(own_cpu)
    from knowmeter.cli import main
    sys.argv = ["knowmeter", *sys.argv[1:]]
    main()
""")


def eval_args(agent: Path, budget_usd: float | None = None) -> list[str]:
    """The benchmark's ``knowmeter eval`` arguments: the 2 variants, ``agent``, concurrency 8, no
    cache, and the budget total ``budget_usd`` when given."""
    budget = [] if budget_usd is None else ["--budget-usd", str(budget_usd)]
    return [
        "eval",
        "--samples",
        "eval-samples.jsonl",
        "--control",
        "a",
        "--treatment",
        "b",
        "--executor",
        str(agent),
        "--concurrency",
        "8",
        "--no-cache",
        "--report-only",
        *budget,
    ]


def run_eval(root: Path, agent: Path, budget_usd: float | None) -> tuple[float, float, float, float]:
    """Wall seconds, peak RSS (MB), the eval process's own CPU seconds, and the wall seconds of
    its execution window (the runner alone: run.json's ``wall_s``, from the first task started
    to the last finished — no start-up, no report)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            EVAL,
            *eval_args(agent, budget_usd),
        ],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - t0
    rss_mb = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    cpu = next(float(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("own-cpu "))
    newest = max((root / ".knowmeter" / "runs").glob("*/run.json"), key=lambda p: p.stat().st_mtime)
    return wall, rss_mb, cpu, float(json.loads(newest.read_text())["wall_s"])


IN_PROCESS = textwrap.dedent("""
    import sys, time, anyio
    from pathlib import Path
    from knowmeter.evaluation import Overrides, resolve_config, prepare, run_budget, start_run, execute
    from knowmeter.postprocess import make_post_process
    cfg = resolve_config(Overrides(samples=["eval-samples.jsonl"], control="a", treatments=["b"],
                                   executor="echo", concurrency=8, no_cache=True), Path.cwd())
    prepared = prepare(cfg)
    run_dir = start_run(prepared)
    t0 = time.perf_counter()
    budget = run_budget(prepared)
    stats, _ = anyio.run(lambda: execute(prepared, run_dir, prepared.tasks, budget=budget,
                                         post_process=make_post_process(prepared, budget)))
    wall = time.perf_counter() - t0
    print(stats.done, wall)
""")


def compile_bytecode() -> None:
    """Compile knowmeter's modules once, as a normal install does, so that no run pays for
    compiling them (with PYTHONDONTWRITEBYTECODE set, as on some CI images, it would every time)."""
    import compileall

    import knowmeter

    compileall.compile_dir(Path(knowmeter.__file__).parent, quiet=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="rounds of (floor, lean floor, eval), interleaved; the fastest of each is reported",
    )
    ap.add_argument("--budget-usd", type=float, default=None, help="run the eval with this budget total")
    ap.add_argument("--cpu-neighbour", action="store_true", help="a CPU-bound process runs through every round")
    args = ap.parse_args()
    tasks = args.samples * 2
    compile_bytecode()
    reference_before = cpu_reference()
    floors: list[tuple[float, float]] = []
    leans: list[tuple[float, float]] = []
    evals: list[tuple[float, float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent = make_project(root, args.samples)
        use_pidfd_child_watcher()  # the floor waits for children the way knowmeter does
        neighbour = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if args.cpu_neighbour else None
        try:
            for _ in range(args.repeats):
                floors.append(asyncio.run(spawn_floor(agent, tasks, 8, lean=False)))
                leans.append(asyncio.run(spawn_floor(agent, tasks, 8, lean=True)))
                evals.append(run_eval(root, agent, args.budget_usd))
        finally:
            if neighbour is not None:
                neighbour.kill()
                neighbour.wait()
        out = subprocess.run(
            [sys.executable, "-c", IN_PROCESS], cwd=root, check=True, capture_output=True, text=True
        ).stdout.split()
        done, inproc_wall = int(out[0]), float(out[1])
    reference_after = cpu_reference()
    (floor, floor_cpu), (lean, lean_cpu) = min(floors), min(leans)
    wall, _, eval_cpu, _ = min(evals)
    window = min(e[3] for e in evals)
    rss = max(e[1] for e in evals)
    print(
        f"workload: {args.samples} samples × 2 variants = {tasks} tasks, concurrency 8, script executor, no judge, "
        f"{'no budget' if args.budget_usd is None else f'budget ${args.budget_usd:g}'}; "
        f"{'a CPU-bound neighbour running; ' if args.cpu_neighbour else ''}"
        f"fastest of {args.repeats} interleaved rounds"
    )
    print(
        f"spawn floor:        {floor:7.2f} s  ({tasks / floor:7.0f} spawns/s; parent CPU {floor_cpu:.2f} s) "
        "asyncio create_subprocess_exec"
    )
    print(
        f"lean spawn floor:   {lean:7.2f} s  ({tasks / lean:7.0f} spawns/s; parent CPU {lean_cpu:.2f} s) "
        "knowmeter's run_command alone"
    )
    print(
        f"knowmeter eval:     {wall:7.2f} s  ({tasks / wall:7.0f} tasks/s; parent CPU {eval_cpu:.2f} s) "
        f"= {wall / floor:.2f} × floor (target ≤ 1.30), {wall / lean:.2f} × lean floor"
    )
    print(
        f"  of which the runner: {window:7.2f} s  execution window (run.json wall_s, fastest) = "
        f"{window / floor:.2f} × floor, {window / lean:.2f} × lean floor; the rest is start-up, plan and report"
    )
    print(
        "  all rounds (floor / lean / eval, s): "
        + "; ".join(f"{f[0]:.2f} / {le[0]:.2f} / {e[0]:.2f}" for f, le, e in zip(floors, leans, evals, strict=True))
    )
    per_round = [e[0] / f[0] for f, e in zip(floors, evals, strict=True)]
    per_round_lean = [e[0] / le[0] for le, e in zip(leans, evals, strict=True)]
    print(
        f"  eval / floor within each round: median {statistics.median(per_round):.2f} "
        f"(range {min(per_round):.2f}–{max(per_round):.2f}); eval / lean floor: median "
        f"{statistics.median(per_round_lean):.2f}"
    )
    print(f"peak RSS (eval):    {rss:7.1f} MB (target ≤ 150)")
    print(
        f"CPU speed reference (bench/_machine.py, lower is faster): {reference_before:.3f} s before, "
        f"{reference_after:.3f} s after"
    )
    print(f"in-process runner:  {inproc_wall:7.2f} s  ({done / inproc_wall:7.0f} tasks/s, target ≥ 500)")


if __name__ == "__main__":
    main()
