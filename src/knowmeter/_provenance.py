"""Where a run came from: tool and Python versions, git commit and dirty flag."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any


def _version() -> str:
    """The installed distribution's version ("unknown" when knowmeter runs from an uninstalled source tree).
    Read from the package metadata, not ``knowmeter.__version__``: importing the public facade from
    inside the package would close an import cycle (the import-graph test)."""
    try:
        return metadata.version("knowmeter")
    except metadata.PackageNotFoundError:
        return "unknown"


def git_state(directory: Path) -> dict[str, Any]:
    """``{commit, dirty}`` of the git checkout containing ``directory`` (None when not in git)."""
    def run(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", *args], cwd=directory, capture_output=True, text=True, timeout=10,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout if proc.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": bool(status and status.strip()) if status is not None else None}


def versions() -> dict[str, str]:
    return {"knowmeter": _version(), "python": sys.version.split()[0], "platform": platform.platform()}
