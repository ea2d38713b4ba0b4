"""Running ``knowmeter`` from a test: in this process (``km``, fast, tracebacks kept) or, for true
command-line tests (exit codes of a real process, Ctrl-C, a second process, a separate Ray driver),
in a process of its own (``km_process``, or ``km_started`` to signal or kill it mid-run); and the
offline demo project (``init_demo``)."""

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


#: The command line of ``knowmeter`` as a process of its own (this interpreter, this checkout).
KNOWMETER = (sys.executable, "-m", "knowmeter")


def km_process(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``knowmeter ARGS`` as a process of its own (``env``: its whole environment, default this one's)."""
    return subprocess.run(
        [*KNOWMETER, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def km_started(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, output: int = subprocess.PIPE
) -> subprocess.Popen[str]:
    """``knowmeter ARGS`` started as a process of its own and not waited for (to signal or kill it
    mid-run); its stdout and stderr go to ``output`` (piped, or ``subprocess.DEVNULL``)."""
    return subprocess.Popen([*KNOWMETER, *args], cwd=cwd, stdout=output, stderr=output, text=True, env=env)


def init_demo(where: Path) -> Path:
    """The offline demo project (``knowmeter init``) in folder ``where``."""
    scaffold(where)
    return where
