"""knowmeter: measure whether a change to an agent's knowledge made the agent better.

The Python API (``knowmeter.api``) is imported on first use, so ``import knowmeter`` stays cheap::

    import knowmeter

    report = knowmeter.evaluate("eval.yaml", repeat=2)
    print(report.decision.headline)
"""

from knowmeter._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from knowmeter.api import (
        Listener,
        RunInterrupted,
        comprehend,
        dry_run,
        evaluate,
        generate_probe_set,
        measure_activation,
        merge,
        observe_traces,
        rescore,
        resume,
    )
    from knowmeter.errors import InputError
    from knowmeter.report import Report

__all__ = [
    "InputError",
    "Listener",
    "Report",
    "RunInterrupted",
    "__version__",
    "comprehend",
    "dry_run",
    "evaluate",
    "generate_probe_set",
    "measure_activation",
    "merge",
    "observe_traces",
    "rescore",
    "resume",
]

_HOMES = {"InputError": "errors", "Report": "report"}


def __getattr__(name: str) -> "Any":  # no __future__ import: it costs more than the module
    """The public names, imported when first used."""
    if name not in __all__ or name == "__version__":
        raise AttributeError(f"module 'knowmeter' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"knowmeter.{_HOMES.get(name, 'api')}"), name)
