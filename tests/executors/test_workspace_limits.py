"""A workspace is never a system folder and never bigger than the fingerprint limits."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from knowmeter.runner import workspace_problem
from knowmeter.runner._plan import MAX_WORKSPACE_FILES
from tests.support.cli import km


@pytest.mark.parametrize("cwd", ["/usr", "/", "/proc", "/proc/self", "../" * 30 + "proc", "../" * 30 + "usr"])
def test_system_folders_are_refused_fast(tmp_path: Path, cwd: str) -> None:
    (tmp_path / "s.json").write_text(json.dumps([{"sample_id": "a", "prompt": "p", "cwd": cwd}]))
    started = time.monotonic()
    r = km("eval", "--samples", "s.json", "--control", "baseline", cwd=tmp_path)
    assert r.returncode == 2 and "system folder" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert time.monotonic() - started < 60  # no fingerprinting of /usr (61 s before)


@pytest.mark.slow
def test_a_workspace_over_the_file_limit_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for i in range(MAX_WORKSPACE_FILES + 1):
        (big / f"f{i}").touch()
    problem = workspace_problem(big)
    assert problem is not None and "more than 20,000 files" in problem
    (big / "f0").unlink()
    assert workspace_problem(big) is None
    assert workspace_problem(tmp_path / "big" / ".." / "big") is None
