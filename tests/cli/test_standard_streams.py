"""A command started with an odd standard stream — an encoding that cannot write its characters
(``PYTHONIOENCODING=latin-1``), stdout or stdin closed (``>&-``, ``<&-``) — does its work and exits
with its own code, never an internal error. Real processes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import KNOWMETER, init_demo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_demo(tmp_path_factory.mktemp("streams") / "demo")


def test_characters_the_encoding_lacks_are_escaped(demo: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    r = subprocess.run([*KNOWMETER, "eval", "--dry-run"], cwd=demo, env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(b"DRY RUN \\u2014 nothing was run"), r.stdout[:80]


def _close_stdout_and_stdin() -> None:
    os.close(0)
    os.close(1)


def test_a_command_started_without_stdout_and_stdin_runs_as_with_them(demo: Path) -> None:
    r = subprocess.run(
        [*KNOWMETER, "eval", "--dry-run", "--json"],
        cwd=demo,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        preexec_fn=_close_stdout_and_stdin,
    )
    assert (r.returncode, r.stderr) == (0, "")


def test_a_full_disk_under_stdout_is_one_line_naming_it(demo: Path) -> None:
    with open("/dev/full", "w") as full:
        r = subprocess.run([*KNOWMETER, "eval", "--dry-run"], cwd=demo, stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2
    (line,) = r.stderr.splitlines()
    assert line.startswith("knowmeter: error: no space left on the device (standard output): free space"), line
