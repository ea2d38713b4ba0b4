"""The Ray tests' cluster: one real local Ray instance per session (2 CPUs, loopback only),
held by ``tests/support/ray_head.py`` in a process of its own; every knowmeter under test is a
separate driver process connecting to it (``--ray-address``), as on a real cluster."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.ray_support import RAY_ENV

HEAD = Path(__file__).resolve().parents[1] / "support" / "ray_head.py"


@pytest.fixture(scope="session")
def ray_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if importlib.util.find_spec("ray") is None:
        if os.environ.get("CI"):
            pytest.fail("Ray is not installed: pip install -e '.[dev]' installs it")
        pytest.skip("Ray is not installed (pip install -e '.[dev]' or '.[ray]')")
    log = tmp_path_factory.mktemp("ray-head") / "head.log"
    for _attempt in range(3):  # Ray gives its raylet 30 s to register: a loaded machine can miss that
        with log.open("w") as err:
            head = subprocess.Popen(
                [sys.executable, str(HEAD)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=RAY_ENV,
            )
        assert head.stdout is not None and head.stdin is not None
        address = head.stdout.readline().strip()
        if address:
            break
        head.wait(timeout=60)
    assert address.startswith("127.0.0.1:"), f"the Ray head did not start on loopback: {log.read_text()[-2000:]}"
    yield address
    assert head.stdin is not None
    head.stdin.close()
    try:
        head.wait(timeout=60)
    except subprocess.TimeoutExpired:
        head.kill()
        head.wait()
