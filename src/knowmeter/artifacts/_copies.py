"""Copies of protected files inside a workspace: a hard link or a copy of the sample file (the
answer key) or of another variant's artifact is copied into every task's sandbox with the rest
of the workspace, where the agent reads it — a path check alone does not see it."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from knowmeter import defaults

__all__ = ["copies_in"]


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def copies_in(folder: Path, files: Mapping[Path, str], ignore: Iterable[str] = defaults.IGNORED_DIRS) -> list[str]:
    """``"<what> (<path in folder>)"`` for every file in ``folder`` (names in ``ignore`` skipped,
    as the workspace copy skips them; symlinks not followed) that is one of ``files`` (path → what
    it is) — the same inode, or the same bytes. Empty files are never a copy."""
    wanted: dict[int, list[tuple[Path, str]]] = {}
    for path, what in files.items():
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if size:
            wanted.setdefault(size, []).append((path, what))
    if not wanted:
        return []
    originals = {p.resolve() for p in files}  # a protected file itself is not its own copy
    skipped = set(ignore)
    digests: dict[Path, str | None] = {}
    found: list[str] = []
    for here, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in skipped)
        for name in sorted(names):
            path = Path(here, name)
            if path.resolve() in originals:
                continue
            try:
                st = path.lstat()
            except OSError:
                continue
            for original, what in wanted.get(st.st_size, []) if path.is_file() and not path.is_symlink() else []:
                same = os.path.samestat(st, original.stat()) or (
                    digests.setdefault(original, _digest(original)) == _digest(path)
                )
                if same:
                    found.append(f"a copy of {what} ({path.relative_to(folder)})")
    return found
