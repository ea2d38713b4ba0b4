"""What one spawn costs the parent, by way of spawning (prints numbers; not a test).

The agent of ``bench/bench_runner.py`` (a shell script that reads its stdin and prints a reply) is
run COUNT times, 8 at a time, each with the payload on its stdin and its stdout read to end of
file, in four ways, rounds interleaved:

- knowmeter's ``run_command`` (what the script executor does for each task) on its native path
  (``_native_spawn``: C worker threads, start to reap; "unknown" when the extension is not built)
  and on its pure-Python pidfd path (``KNOWMETER_SPAWN=python``);
- 8 Python threads, each ``subprocess.Popen(...).communicate()`` (the plain blocking way);
- ``bench/native/spawn_floor.c``: 8 C threads with ``posix_spawn``, no interpreter (built with the
  machine's C compiler; "unknown" when there is none).

It prints each way's parent CPU a spawn (user + system, the children excluded) and wall seconds;
for the native path also how that CPU splits between the event loop's thread and the C worker
threads (each thread's run time from ``/proc/self/task/*/schedstat``; "unknown" where the kernel
does not keep it).
On a 2-core machine whose children are CPU-bound, the parent's CPU a task is what the whole eval's
ratio to the spawn floor is made of (issue 32's note): this shows how much of it is the interpreter.

    python bench/bench_spawn_cost.py [--count 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_runner import PAYLOAD, SCRIPT, spawn_floor

from knowmeter.executors import _spawn
from knowmeter.executors._spawn import use_pidfd_child_watcher

CONCURRENCY = 8
NATIVE_SOURCE = Path(__file__).resolve().parent / "native" / "spawn_floor.c"

#: (parent CPU seconds, wall seconds) of one way's COUNT spawns
Measure = Callable[[Path, int], tuple[float, float]]

#: the name of the native spawner's worker threads (``_native_spawn.c``)
WORKER_THREAD = "knowmeter-spawn"


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def worker_threads_cpu() -> float | None:
    """CPU seconds the native spawner's worker threads alive now have run, or None when the kernel
    keeps no per-thread run time here."""
    total = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            if (task / "comm").read_text().strip() == WORKER_THREAD:
                total += int((task / "schedstat").read_text().split()[0])
        except FileNotFoundError:  # (the thread exited)
            continue
        except (OSError, ValueError, IndexError):
            return None
    return total / 1e9


def knowmeter_loop(native: bool, workers: list[float | None] | None = None) -> Measure:
    """``run_command`` on its native path (``native``) or its pure-Python one; ``workers`` gets the
    native worker threads' CPU seconds of each measure (they live on between rounds: an idle one
    exits only after seconds without work)."""

    def measure(agent: Path, count: int) -> tuple[float, float]:
        saved = _spawn.NATIVE
        _spawn.NATIVE = saved if native else None
        before = worker_threads_cpu()
        try:
            wall, cpu = asyncio.run(spawn_floor(agent, count, CONCURRENCY, lean=True))
        finally:
            _spawn.NATIVE = saved
        after = worker_threads_cpu()
        if workers is not None:
            workers.append(None if before is None or after is None else after - before)
        return cpu, wall

    return measure


def python_threads(agent: Path, count: int) -> tuple[float, float]:
    def one(_: int) -> bytes:
        proc = subprocess.Popen(
            [str(agent)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return proc.communicate(PAYLOAD)[0]

    cpu, t0 = _self_cpu(), time.perf_counter()
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(one, range(count)))
    return _self_cpu() - cpu, time.perf_counter() - t0


def native(binary: Path) -> Measure:
    def measure(agent: Path, count: int) -> tuple[float, float]:
        out = subprocess.run([str(binary), str(agent), str(count), str(CONCURRENCY)], capture_output=True, check=True)
        user, system, wall = (float(x) for x in out.stdout.split())
        return user + system, wall

    return measure


def build_native(folder: Path) -> Path | None:
    """The C spawner built in ``folder``, or None when the machine has no C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    binary = folder / "spawn_floor"
    subprocess.run([compiler, "-O2", "-pthread", "-o", str(binary), str(NATIVE_SOURCE)], check=True)
    return binary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    use_pidfd_child_watcher()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        agent = folder / "agent.sh"
        agent.write_text(SCRIPT)
        agent.chmod(0o755)
        binary = build_native(folder)
        workers: list[float | None] = []
        ways: dict[str, Measure | None] = {
            "knowmeter run_command, native (C threads)": knowmeter_loop(True, workers) if _spawn.NATIVE else None,
            "knowmeter run_command, Python (pidfd)": knowmeter_loop(False),
            "Python threads, Popen.communicate": python_threads,
            "C threads, posix_spawn (no interpreter)": native(binary) if binary else None,
        }
        seen: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, way in ways.items():
                if way is not None:
                    seen[name].append(way(agent, args.count))
    print(f"{args.count} spawns of a shell-script agent, {CONCURRENCY} at a time; median of {args.rounds} rounds")
    for name, runs in seen.items():
        if not runs:
            print(f"  {name:42s} unknown (not built: no C compiler on this machine)")
            continue
        cpu = statistics.median(c for c, _ in runs) / args.count * 1000
        wall = statistics.median(w for _, w in runs)
        print(f"  {name:42s} parent CPU {cpu:6.3f} ms a spawn, wall {wall:5.2f} s")
        if name.endswith("native (C threads)"):
            split = [(c, w) for (c, _), w in zip(runs, workers, strict=True) if w is not None]
            if len(split) < len(runs):
                print(f"  {'  of which worker threads / loop thread':42s} unknown (no per-thread run time here)")
                continue
            in_workers = statistics.median(w for _, w in split) / args.count * 1000
            on_loop = statistics.median(c - w for c, w in split) / args.count * 1000
            label = "  of which the C worker threads"
            print(f"  {label:42s} {in_workers:6.3f} ms, the loop's thread {on_loop:6.3f} ms")


if __name__ == "__main__":
    main()
