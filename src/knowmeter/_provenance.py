"""Where a run came from: tool and Python versions, git commit and dirty flag."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from knowmeter._version import __version__


def git_state(directory: Path) -> dict[str, Any]:
    """``{commit, dirty}`` of the git checkout containing ``directory`` (None when not in git)."""

    def run(*args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", *args], cwd=directory, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout if proc.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": bool(status and status.strip()) if status is not None else None}


def git_toplevel(directory: Path) -> Path | None:
    """The working tree holding ``directory``: the nearest folder at or above it with a ``.git``
    (a folder, or a worktree's file); None outside git."""
    start = directory.resolve()
    return next((d for d in (start, *start.parents) if (d / ".git").exists()), None)


def versions() -> dict[str, str]:
    """The versions a run records: knowmeter's (``knowmeter._version``, the one place it is
    written: pyproject.toml reads it too), Python's and the platform."""
    return {"knowmeter": __version__, "python": sys.version.split()[0], "platform": platform.platform()}
