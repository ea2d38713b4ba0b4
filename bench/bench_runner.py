"""Runner benchmark (prints numbers; not a test).

Workload: 1,000, 2,000 and 4,000 samples × 2 variants, an instant shell-script executor (omk script protocol),
concurrency 8, no judge. Measures knowmeter's wall time, tasks/s and peak RSS (the eval runs as
a child process, so its ru_maxrss is its own), and — in the same run, on the same machine — the
bare process-spawn floor: the same script spawned 4,000 times, 8 at a time, with nothing else
done — measured two ways: with asyncio's ``create_subprocess_exec`` + ``communicate`` (the standard
library's way) and with knowmeter's own ``run_command`` (the native C spawner when built, else prefilled stdin pipe and
pidfd exit from Python — ``KNOWMETER_SPAWN=python`` measures that path; what
the script executor uses). The first is the floor the target is stated against; the second
shows what grading, analysis, storage and the report cost on top of spawning alone. Then the
same workload with an in-process executor (no spawning) for the runner's own overhead. Each
floor's parent CPU is printed too (this VM's wall times vary by ±30 % between identical runs).
The eval's own execution window (run.json's ``wall_s``: the runner alone, without start-up,
planning and the report) is printed beside its whole wall time, and so is the eval's parent CPU
per task inside that window and outside it: on a machine whose cores the agents keep busy, every
CPU-ms the parent spends costs wall time, so these say where the window stands even when wall
times drift.
With no neighbour, each size ends with its CPU accounting: the CPU seconds of the agents (every
process the eval reaped) and of the parent, the bound they set on the wall time (no run of that
much CPU ends sooner than its CPU seconds / the cores, whatever overlaps), and the parent CPU the
target leaves once the agents are paid: where a bar is out of the harness's reach on this machine,
this shows it.
Targets: wall ≤ 1.2 × spawn floor (≤ 1.5 × with a CPU-bound neighbour), peak RSS ≤ 150 MB, in-process ≥ 500 tasks/s.

    python bench/bench_runner.py [--samples 1000 2000 4000] [--repeats 3] [--budget-usd 1000] [--cpu-neighbour]

Several sizes are measured in the same run, their rounds interleaved, each against three floors: the
shell's ``seq N | xargs -P 8 -n 1 AGENT`` (the floor the issue's bar is stated against), asyncio's,
and knowmeter's own spawner.

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
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
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


#: ``knowmeter eval`` as ``python -m knowmeter`` runs it, printing to stderr on the way out its own
#: CPU seconds (its agents excluded) and those it spent inside the execution window (the runner's
#: ``execute_tasks``: spawning, the executor, parsing, grading, analysis, the results file and the
#: progress line, every thread of the process included).
EVAL = textwrap.dedent("""
    import atexit, resource, sys, time
    import knowmeter.evaluation as evaluation
    window = []
    execute_tasks = evaluation.execute_tasks  # (an AttributeError here: the runner's entry point moved)
    async def timed_execute_tasks(*args, **kwargs):
        cpu = time.process_time()
        try:
            return await execute_tasks(*args, **kwargs)
        finally:
            window.append(time.process_time() - cpu)
    evaluation.execute_tasks = timed_execute_tasks
    def own_cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        print(f"own-cpu {r.ru_utime + r.ru_stime} {sum(window) if window else 'nan'}", file=sys.stderr)
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


@dataclass(frozen=True)
class EvalRun:
    """One ``knowmeter eval`` of a round."""

    wall_s: float
    rss_mb: float
    #: the eval process's own CPU seconds (its agents excluded)
    cpu_s: float
    #: the wall seconds of its execution window (the runner alone: run.json's ``wall_s``, from the
    #: first task started to the last finished — no start-up, no report)
    window_s: float
    #: the process's CPU seconds inside that window (all its threads; NaN: not measured)
    window_cpu_s: float
    #: the CPU seconds of the agents it spawned (every process it reaped)
    agents_cpu_s: float


def run_eval(root: Path, agent: Path, budget_usd: float | None) -> EvalRun:
    """Run ``knowmeter eval`` on the project in ``root`` and measure it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
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
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss_mb = max(before.ru_maxrss, after.ru_maxrss) / 1024
    cpu, window_cpu = next(
        map(float, line.split()[1:]) for line in done.stderr.splitlines() if line.startswith("own-cpu ")
    )
    newest = max((root / ".knowmeter" / "runs").glob("*/run.json"), key=lambda p: p.stat().st_mtime)
    agents_cpu = children_cpu(after) - children_cpu(before) - cpu
    return EvalRun(wall, rss_mb, cpu, float(json.loads(newest.read_text())["wall_s"]), window_cpu, agents_cpu)


def children_cpu(usage: resource.struct_rusage) -> float:
    """User + system CPU seconds of a RUSAGE_CHILDREN reading."""
    return usage.ru_utime + usage.ru_stime


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


def xargs_floor(agent: Path, count: int, concurrency: int) -> tuple[float, float]:
    """Wall and CPU seconds (xargs and its agents) of ``seq COUNT | xargs -P CONCURRENCY -n 1 AGENT``:
    the shell's bare spawn floor (each child's stdin is /dev/null, its stdout discarded; nothing is
    parsed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        f"seq {count} | xargs -P {concurrency} -n 1 {agent} >/dev/null", shell=True, check=True, executable="/bin/sh"
    )
    wall = time.perf_counter() - t0
    return wall, children_cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - children_cpu(before)


@dataclass
class Size:
    """One workload size's project and what each interleaved round measured there."""

    samples: int
    root: Path
    agent: Path
    xargs: list[float] = field(default_factory=list)
    xargs_cpus: list[float] = field(default_factory=list)
    floors: list[tuple[float, float]] = field(default_factory=list)
    leans: list[tuple[float, float]] = field(default_factory=list)
    evals: list[EvalRun] = field(default_factory=list)

    @property
    def tasks(self) -> int:
        return self.samples * 2

    def round(self, budget_usd: float | None) -> None:
        wall, cpu = xargs_floor(self.agent, self.tasks, 8)
        self.xargs.append(wall)
        self.xargs_cpus.append(cpu)
        self.floors.append(asyncio.run(spawn_floor(self.agent, self.tasks, 8, lean=False)))
        self.leans.append(asyncio.run(spawn_floor(self.agent, self.tasks, 8, lean=True)))
        self.evals.append(run_eval(self.root, self.agent, budget_usd))


def report_size(size: Size, target: float, cores: int | None) -> None:
    """Print one size's figures: the fastest of its rounds, and the ratio eval / floor within each
    round (the machine's speed drifts between rounds; a ratio within a round does not); with
    ``cores`` (no neighbour running), what the CPU spent says of the best wall time possible."""
    tasks = size.tasks
    xargs = min(size.xargs)
    (floor, floor_cpu), (lean, lean_cpu) = min(size.floors), min(size.leans)
    fastest = min(size.evals, key=lambda e: e.wall_s)
    wall, eval_cpu = fastest.wall_s, fastest.cpu_s
    window = min(e.window_s for e in size.evals)
    window_cpu = statistics.median(e.window_cpu_s for e in size.evals)
    print(f"-- {size.samples} samples × 2 variants = {tasks} tasks (fastest of {len(size.evals)} rounds)")
    print(f"   xargs -P 8 floor:   {xargs:7.2f} s  ({tasks / xargs:7.0f} spawns/s) the shell's bare spawn floor")
    print(
        f"   spawn floor:        {floor:7.2f} s  ({tasks / floor:7.0f} spawns/s; parent CPU {floor_cpu:.2f} s) "
        "asyncio create_subprocess_exec + communicate"
    )
    print(
        f"   lean spawn floor:   {lean:7.2f} s  ({tasks / lean:7.0f} spawns/s; parent CPU {lean_cpu:.2f} s "
        f"= {lean_cpu / tasks * 1000:.3f} ms a spawn) knowmeter's run_command alone"
    )
    print(
        f"   knowmeter eval:     {wall:7.2f} s  ({tasks / wall:7.0f} tasks/s; parent CPU {eval_cpu:.2f} s "
        f"= {eval_cpu / tasks * 1000:.3f} ms a task) = {wall / xargs:.2f} × xargs floor, {wall / floor:.2f} × "
        f"asyncio floor, {wall / lean:.2f} × lean floor"
    )
    print(
        f"     of which the runner: {window:7.2f} s execution window (run.json wall_s) = {window / xargs:.2f} × "
        "xargs floor; the rest is start-up, plan and report"
    )
    if math.isnan(window_cpu):
        print("     parent CPU inside the window: unknown (the eval did not report it)")
    else:
        print(
            f"     parent CPU inside the window: {window_cpu:.2f} s = {window_cpu / tasks * 1000:.3f} ms a task "
            f"(median of the rounds; outside it: {(eval_cpu - fastest.window_cpu_s) / tasks * 1000:.3f} ms a task)"
        )
    rounds = list(zip(size.xargs, size.floors, size.evals, strict=True))
    per_round = [(e.wall_s / x, e.wall_s / f[0]) for x, f, e in rounds]
    print(
        "   all rounds (xargs / asyncio floor / eval, s): "
        + "; ".join(f"{x:.2f} / {f[0]:.2f} / {e.wall_s:.2f}" for x, f, e in rounds)
    )
    print(
        f"   eval / floor within each round: xargs median {statistics.median(r[0] for r in per_round):.2f} "
        f"(range {min(r[0] for r in per_round):.2f}–{max(r[0] for r in per_round):.2f}), asyncio median "
        f"{statistics.median(r[1] for r in per_round):.2f} (target ≤ {target:.2f})"
    )
    if cores is not None:
        report_cpu_accounting(size, target, cores)


def report_cpu_accounting(size: Size, target: float, cores: int) -> None:
    """Print the bound the CPU the eval spends sets on its wall time: agents and parent together
    cannot finish before their CPU seconds / the cores, however well they overlap; and the parent
    CPU the target leaves once the agents' own CPU is paid (medians of the rounds)."""
    tasks = size.tasks
    rounds = list(zip(size.xargs, size.xargs_cpus, size.evals, strict=True))
    busy = statistics.median(cpu / (cores * wall) for wall, cpu, _ in rounds)
    agents = statistics.median(e.agents_cpu_s for e in size.evals)
    parent = statistics.median(e.cpu_s for e in size.evals)
    bound = statistics.median((e.agents_cpu_s + e.cpu_s) / cores / wall for wall, _, e in rounds)
    allowed = statistics.median(target * wall * cores - e.agents_cpu_s for wall, _, e in rounds)
    print(
        f"   CPU accounting ({cores} cores; medians of the rounds): the xargs floor keeps {busy:.0%} of the cores "
        f"busy; the eval spends {agents + parent:.2f} CPU-s = agents {agents:.2f} + parent {parent:.2f}"
    )
    print(
        f"     so even with no core ever idle it cannot end before {bound:.2f} × the xargs floor; the target "
        f"leaves the parent ≤ {allowed:.2f} CPU-s = {allowed / tasks * 1000:.3f} ms a task (now "
        f"{parent / tasks * 1000:.3f}), and only if all of it overlaps the agents"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--samples", type=int, nargs="+", default=[1000, 2000, 4000], help="sizes (× 2 variants = tasks), interleaved"
    )
    ap.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="rounds of (xargs floor, floor, lean floor, eval) per size, interleaved across sizes; "
        "the fastest of each is reported",
    )
    ap.add_argument("--budget-usd", type=float, default=None, help="run the eval with this budget total")
    ap.add_argument("--cpu-neighbour", action="store_true", help="a CPU-bound process runs through every round")
    args = ap.parse_args()
    target = 1.5 if args.cpu_neighbour else 1.2
    compile_bytecode()
    reference_before = cpu_reference()
    with tempfile.TemporaryDirectory() as tmp:
        sizes = []
        for n in args.samples:
            root = Path(tmp) / f"n{n}"
            sizes.append(Size(n, root, make_project(root, n)))
        use_pidfd_child_watcher()  # the floor waits for children the way knowmeter does
        neighbour = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if args.cpu_neighbour else None
        try:
            for _ in range(args.repeats):
                for size in sizes:
                    size.round(args.budget_usd)
        finally:
            if neighbour is not None:
                neighbour.kill()
                neighbour.wait()
        out = subprocess.run(
            [sys.executable, "-c", IN_PROCESS], cwd=sizes[0].root, check=True, capture_output=True, text=True
        ).stdout.split()
        done, inproc_wall = int(out[0]), float(out[1])
    reference_after = cpu_reference()
    print(
        "workload: concurrency 8, script executor, no judge, "
        f"{'no budget' if args.budget_usd is None else f'budget ${args.budget_usd:g}'}; "
        f"{'a CPU-bound neighbour running; ' if args.cpu_neighbour else ''}"
        f"{args.repeats} rounds interleaved across the sizes; target whole eval ≤ {target:.1f} × the spawn floor"
    )
    cores = None if args.cpu_neighbour else len(os.sched_getaffinity(0))
    for size in sizes:
        report_size(size, target, cores)
    rss = max(e.rss_mb for size in sizes for e in size.evals)
    print(f"peak RSS (eval, any size): {rss:7.1f} MB (target ≤ 150)")
    print(
        f"CPU speed reference (bench/_machine.py, lower is faster): {reference_before:.3f} s before, "
        f"{reference_after:.3f} s after"
    )
    print(f"in-process runner:  {inproc_wall:7.2f} s  ({done / inproc_wall:7.0f} tasks/s, target ≥ 500)")


if __name__ == "__main__":
    main()
