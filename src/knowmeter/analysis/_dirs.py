"""Knowledge folders walked within bounds: a system folder is never walked, and a walk stops
after ``MAX_KNOWLEDGE_FILES`` files; either is said in a warning (coverage then covers what was
walked)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

from knowmeter import defaults
from knowmeter._folders import system_folder

log = logging.getLogger("knowmeter")

#: files one knowledge folder contributes at most (a folder with more is not a knowledge base)
MAX_KNOWLEDGE_FILES = 20_000


def knowledge_dir_problem(directory: Path) -> str | None:
    """Why ``directory`` cannot be a knowledge folder (a system folder), or None."""
    real = system_folder(directory)
    return None if real is None else f"{directory} resolves to the system folder {real}; name the knowledge folder"


def walk_knowledge_dir(directory: Path, limit: int = MAX_KNOWLEDGE_FILES) -> Iterator[Path]:
    """Regular files under ``directory`` (hidden names and cache folders skipped), sorted per
    folder; nothing for a system folder, at most ``limit`` files (each said in a warning)."""
    problem = knowledge_dir_problem(directory)
    if problem is not None:
        log.warning("knowmeter: knowledge folder skipped: %s", problem)
        return
    n = 0
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in defaults.IGNORED_DIRS)
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            if n >= limit:
                log.warning(
                    "knowmeter: knowledge folder %s holds more than %s files: only the first %s are counted "
                    "in coverage; name a smaller folder",
                    directory,
                    f"{limit:,}",
                    f"{limit:,}",
                )
                return
            n += 1
            yield Path(dirpath, name)
