"""Fixtures for the core tests: the demo project and one evaluated report (module-wide)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def km(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "knowmeter", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    r = km("init", "demo", cwd=root)
    assert r.returncode == 0, r.stderr
    return root / "demo"


@pytest.fixture(scope="session")
def demo_report(demo: Path) -> dict:  # type: ignore[type-arg]
    r = km("eval", "--json", "--report-only", cwd=demo)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


