"""Where a Skill Graph repository and its skill library start, seen from one of their files."""

from __future__ import annotations

from pathlib import Path


def find_repo_root(path: Path) -> Path:
    """The repository a SKILL.md or eval file belongs to, which ``truth_sources`` paths are
    relative to: the nearest ancestor holding ``.git``; else its library root
    (:func:`find_library_root`); else the file's own folder."""
    path = path.resolve()
    for folder in path.parents:
        if (folder / ".git").exists():
            return folder
    return find_library_root(path) or path.parent


def find_library_root(path: Path) -> Path | None:
    """The folder a skill library's layout hangs from, seen from a SKILL.md or eval file in it:
    the parent of the nearest ``skills/`` folder (``skills/<name>/SKILL.md``,
    ``skills/<shelf>/<name>/…``); else the parent of the ``examples/evals/`` or ``evals/``
    folder holding the file; ``None`` for a file in neither layout. In a git repository it may
    lie below the repository root (the comprehension example ``knowmeter init`` writes)."""
    path = path.resolve()
    for folder in path.parents:
        if folder.name == "skills":
            return folder.parent
    parent = path.parent
    if parent.name == "evals":
        return parent.parent.parent if parent.parent.name == "examples" else parent.parent
    return None
