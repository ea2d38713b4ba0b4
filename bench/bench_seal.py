"""What sealing a task costs (prints numbers; not a test).

Runs ``/bin/true`` N times plainly and N times inside the seal an agent CLI task gets (bubblewrap:
a mount, PID and IPC namespace, the temporary root and the protected paths hidden, the sandbox
bound back), one after the other, and prints the median and p90 wall time of each and the
difference: the fixed cost sealing adds to every agent task (an agent CLI run itself takes
seconds). The sandbox's own setup (copying the workspace) is the same sealed or not.

    python bench/bench_seal.py [--n 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from knowmeter.executors._seal import Seal, seal_problem


def _times(argv: list[str], n: int, cwd: Path) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, stdin=subprocess.DEVNULL)
        out.append((time.perf_counter() - t0) * 1000)
    return out


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
        plain = _times(["/bin/true"], n, root / "work")
        sealed = _times(seal.argv(["/bin/true"], cwd=root / "work"), n, root / "work")
    print(f"plain  /bin/true: {_summary(plain)}  (n={n})")
    print(f"sealed /bin/true: {_summary(sealed)}")
    print(f"sealing adds {statistics.median(sealed) - statistics.median(plain):.2f} ms per task (median)")


if __name__ == "__main__":
    main()
