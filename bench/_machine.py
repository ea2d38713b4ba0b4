"""How fast this machine's CPU is right now, for reading a benchmark's wall-clock numbers.

Some VMs (this project's 2-core one among them) run the same pure-Python loop anywhere from
about 1× to 2× slower from one minute to the next, with nothing else running. Benchmarks print
this reference before and after their runs so a reader can tell a slow phase from a regression.
"""

from __future__ import annotations

import time


def cpu_reference(iterations: int = 5_000_000) -> float:
    """Seconds a fixed pure-Python loop takes now (lower is faster; ~0.25 s in a fast phase)."""
    started = time.perf_counter()
    total = 0
    for i in range(iterations):
        total += i
    return time.perf_counter() - started
