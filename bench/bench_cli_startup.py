"""``knowmeter --help`` start-up time (prints numbers; target ≤ 0.3 s) and a check that the
heavy modules (scipy, numpy, the SDKs) are not imported by it."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def main() -> None:
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "knowmeter", "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, knowmeter.cli; "
            "print(sorted(m for m in ('scipy', 'numpy', 'openai', 'anthropic', 'rich') "
            "if m in sys.modules))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"knowmeter --help: median {statistics.median(times):.3f} s, min {min(times):.3f} s (target ≤ 0.3 s)")
    print(f"heavy modules imported by the CLI entry point: {probe}")


if __name__ == "__main__":
    main()
