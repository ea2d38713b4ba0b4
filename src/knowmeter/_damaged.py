"""Setting a damaged SQLite file aside: the index and the response cache are both started
afresh when theirs cannot be read, and the damaged file is kept for a look, never deleted."""

from __future__ import annotations

import os
from pathlib import Path


def set_aside(path: Path) -> Path:
    """Move the SQLite file ``path`` to ``NAME.damaged`` (its journal, WAL and shared-memory
    files are removed, as they belong to it); the damaged file's new path."""
    damaged = path.with_name(f"{path.name}.damaged")
    os.replace(path, damaged)
    for suffix in ("-journal", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    return damaged
