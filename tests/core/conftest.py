"""Fixtures for the core tests: the demo project and one evaluated report (module-wide), and
``knowmeter`` commands run in-process (``km``) or, for the few true command-line tests (exit
codes of a real process, Ctrl-C, a second process), in a process of their own (``km_process``)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

import knowmeter
from knowmeter.cli import cli
from knowmeter.demo import scaffold


@dataclass(frozen=True)
class Ran:
    """What a command did: its exit code and its two output streams."""

    returncode: int
    stdout: str
    stderr: str


def km(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Ran:
    """``knowmeter ARGS`` in this process, in folder ``cwd`` (an unexpected exception fails the test
    with its traceback instead of exiting 3)."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    finally:
        os.chdir(old)
    return Ran(r.exit_code, r.stdout, r.stderr)


def km_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``knowmeter ARGS`` as a process of its own."""
    return subprocess.run([sys.executable, "-m", "knowmeter", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def init_demo(where: Path) -> Path:
    """The offline demo project (``knowmeter init``) in folder ``where``."""
    scaffold(where)
    return where


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_demo(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture(scope="session")
def demo_report(demo: Path) -> dict:  # type: ignore[type-arg]
    """The demo run's report.json content (``knowmeter.evaluate`` returns the typed ``Report``)."""
    return knowmeter.evaluate(demo).to_dict()
