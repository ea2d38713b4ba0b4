"""Where a Skill Graph repository starts, seen from one of its files."""

from __future__ import annotations

from pathlib import Path


def find_repo_root(path: Path) -> Path:
    """The repository a SKILL.md or eval file belongs to, which ``truth_sources`` paths are
    relative to: the nearest ancestor holding ``.git``; else the parent of the nearest
    ``skills/`` folder (``skills/<name>/SKILL.md``, ``skills/<shelf>/<name>/…``); else the parent
    of an ``examples/evals/`` or ``evals/`` folder; else the file's own folder."""
    path = path.resolve()
    ancestors = list(path.parents)
    for folder in ancestors:
        if (folder / ".git").exists():
            return folder
    for folder in ancestors:
        if folder.name == "skills":
            return folder.parent
    parent = path.parent
    if parent.name == "evals":
        return parent.parent.parent if parent.parent.name == "examples" else parent.parent
    return parent
