"""What the Ray tests share: the environment of a driver of the session's Ray instance and
``knowmeter`` run as such a driver."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.cli import km_process

#: The head starts with Ray's token authentication (its default for a new local instance, the token
#: in ~/.ray/auth_token); a driver connecting to it says so, as Ray's docs ask of every client.
RAY_ENV = {**os.environ, "RAY_AUTH_MODE": "token"}


def km(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``knowmeter ARGS`` as a process of its own with ``RAY_ENV``."""
    return km_process(*args, cwd=cwd, env=RAY_ENV, timeout=timeout)
