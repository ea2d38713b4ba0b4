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

It prints each way's parent CPU a spawn (user + system, the children excluded) and wall seconds.
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


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def knowmeter_loop(native: bool) -> Measure:
    """``run_command`` on its native path (``native``) or its pure-Python one."""

    def measure(agent: Path, count: int) -> tuple[float, float]:
        saved = _spawn.NATIVE
        _spawn.NATIVE = saved if native else None
        try:
            wall, cpu = asyncio.run(spawn_floor(agent, count, CONCURRENCY, lean=True))
        finally:
            _spawn.NATIVE = saved
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
        ways: dict[str, Measure | None] = {
            "knowmeter run_command, native (C threads)": knowmeter_loop(True) if _spawn.NATIVE else None,
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


if __name__ == "__main__":
    main()
