"""How the event loop waits for child processes.

Python 3.11's asyncio starts one thread per child process to wait for it, and the event loop
blocks until that thread runs: with thousands of short-lived agent processes that is a large
share of the run. Where Linux offers pidfds, a pidfd watcher waits for every child from the
loop itself, which is what Python ≥ 3.12 does by default.
"""

from __future__ import annotations

import asyncio
import os
import sys
import warnings


def use_pidfd_child_watcher() -> bool:
    """Install asyncio's pidfd child watcher on Python 3.11 when the kernel supports pidfds.
    Returns True when it was installed (nothing to do on newer Pythons or other systems)."""
    if sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        asyncio.set_child_watcher(asyncio.PidfdChildWatcher())
    return True
