"""The analysis package loads its modules on first use: every public name resolves, and a process
that only analyses traces does not import the report models, the classifier or the drafts."""

from __future__ import annotations

import json
import subprocess
import sys

import knowmeter.analysis as analysis


def test_every_public_name_resolves() -> None:
    assert sorted(analysis._LAZY) == sorted(analysis.__all__)
    for name in analysis.__all__:
        assert getattr(analysis, name) is not None
    assert dir(analysis) == sorted(analysis.__all__)


def test_analysing_a_trace_loads_only_what_it_uses() -> None:
    code = (
        "import json, sys\n"
        "from knowmeter.analysis import analyze_task\n"
        "from knowmeter.traces import Trace\n"
        "analyze_task(Trace(events=[]), sample_id='s')\n"
        "print(json.dumps([m for m in sys.modules if m.startswith(('knowmeter.analysis.', 'knowmeter.samples',\n"
        "      'knowmeter.executors', 'anyio', 'yaml'))]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    assert {"knowmeter.analysis._task", "knowmeter.analysis._searches", "knowmeter.analysis._phrases"} <= loaded
    assert not loaded & {
        "knowmeter.analysis._aggregate",
        "knowmeter.analysis._hedging",
        "knowmeter.analysis._drafts",
        "knowmeter.analysis._coverage",
        "knowmeter.samples",
        "knowmeter.executors",
        "anyio",
        "yaml",
    }
