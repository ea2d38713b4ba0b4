"""numpy's BLAS (OpenBLAS) started with one thread when knowmeter imports numpy for the report."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: The variable OpenBLAS reads once, when numpy loads it.
THREADS_VARIABLE = "OPENBLAS_NUM_THREADS"


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within this block, a first import of numpy starts OpenBLAS with one thread, unless the user
    set ``OPENBLAS_NUM_THREADS``. knowmeter's products are small matrix-vector ones (the
    bootstrap's resample chunks): a pool of threads only costs CPU — started at import, spinning
    after each call — that the machine's agents and neighbours pay. The environment is restored
    when the block ends, so no process started later inherits the setting."""
    if "numpy" in sys.modules or THREADS_VARIABLE in os.environ:
        yield
        return
    os.environ[THREADS_VARIABLE] = "1"
    try:
        yield
    finally:
        os.environ.pop(THREADS_VARIABLE, None)
