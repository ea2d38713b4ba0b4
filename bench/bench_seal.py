"""What sealing a task costs (prints numbers; not a test).

Runs ``/bin/true`` N times plainly, inside the seal an agent CLI task gets (bubblewrap: a mount,
PID, IPC and network namespace, the temporary root and the protected paths hidden, the sandbox
bound back), and inside that seal with its network relay (one model-API endpoint: the relay's
interpreter starts before the agent, ``_netseal``), rounds interleaved (the machine is shared),
and prints the median and p90 wall time of each, and the difference: the fixed cost sealing adds
to every agent task (an agent CLI run itself takes seconds). The sandbox's own setup (copying
the workspace) is the same sealed or not.
No CPU column: the processes inside the seal's PID namespace are not reaped by this process, so
``RUSAGE_CHILDREN`` does not count them.

    python bench/bench_seal.py [--n 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from knowmeter.executors._netseal import Endpoint
from knowmeter.executors._seal import Seal, seal_problem


def _once(argv: list[str], cwd: Path) -> float:
    """Wall milliseconds of one run of ``argv``."""
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1000


def _summary(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"median {statistics.median(ms):6.2f} ms, p90 {ms[int(len(ms) * 0.9)]:6.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    n = ap.parse_args().n
    problem = seal_problem()
    if problem:
        raise SystemExit(f"cannot seal here: {problem}")
    with tempfile.TemporaryDirectory(prefix="knowmeter-bench-") as tmp:
        root = Path(tmp) / "knowmeter-task"
        (root / "work").mkdir(parents=True)
        hidden = Path(tmp) / "project"
        (hidden / "skills" / "a").mkdir(parents=True)
        (hidden / "eval-samples.yaml").write_text("[]")
        seal = Seal(root, hide=(hidden / "skills" / "a", hidden / "eval-samples.yaml"))
        net = Path(tmp) / "net"
        net.mkdir()
        relayed = Seal(seal.root, hide=seal.hide, endpoints=(Endpoint("127.0.0.1", 8080),), net_dir=net)
        kinds = {
            "plain": ["/bin/true"],
            "sealed": seal.argv(["/bin/true"], cwd=root / "work"),
            "sealed + network relay": relayed.argv(["/bin/true"], cwd=root / "work"),
        }
        runs: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(n):  # interleaved: a burst of load on the shared machine hits every kind alike
            for kind, argv in kinds.items():
                runs[kind].append(_once(argv, root / "work"))
    for kind, times in runs.items():
        print(f"{kind:23} /bin/true: {_summary(times)}  (n={n})")
    plain = statistics.median(runs["plain"])
    for kind in ("sealed", "sealed + network relay"):
        extra = statistics.median(runs[kind]) - plain
        print(f"{kind} adds {extra:.2f} ms wall per task (median)")


if __name__ == "__main__":
    main()
