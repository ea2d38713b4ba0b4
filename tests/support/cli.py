"""Running ``knowmeter`` from a test: in this process (``km``, fast, tracebacks kept) or, for true
command-line tests (exit codes of a real process, Ctrl-C, a second process, a separate Ray driver),
in a process of its own (``km_process``); and the offline demo project (``init_demo``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

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


def km_process(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``knowmeter ARGS`` as a process of its own (``env``: its whole environment, default this one's)."""
    return subprocess.run(
        [sys.executable, "-m", "knowmeter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def init_demo(where: Path) -> Path:
    """The offline demo project (``knowmeter init``) in folder ``where``."""
    scaffold(where)
    return where
