"""Where a run came from: tool and Python versions, git commit and dirty flag."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from knowmeter._version import __version__


def git_state(directory: Path) -> dict[str, Any]:
    """``{commit, dirty}`` of the git checkout containing ``directory`` (None when not in git, or
    before its first commit), from one ``git status``: its ``branch.oid`` header is the commit,
    any change to a tracked file makes it dirty."""
    try:
        proc = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch", "--no-ahead-behind", "--untracked-files=no"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "dirty": None}
    lines = proc.stdout.splitlines() if proc.returncode == 0 else []
    commit = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), "(initial)")
    if commit == "(initial)":
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": any(not line.startswith("#") for line in lines)}


def git_toplevel(directory: Path) -> Path | None:
    """The working tree holding ``directory``: the nearest folder at or above it with a ``.git``
    (a folder, or a worktree's file); None outside git."""
    start = directory.resolve()
    return next((d for d in (start, *start.parents) if (d / ".git").exists()), None)


def versions() -> dict[str, str]:
    """The versions a run records: knowmeter's (``knowmeter._version``, the one place it is
    written: pyproject.toml reads it too), Python's and the platform."""
    return {"knowmeter": __version__, "python": sys.version.split()[0], "platform": platform.platform()}
