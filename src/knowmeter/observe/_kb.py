"""Matching the paths in real traces to the knowledge files of ``--kb DIR``.

Traces hold paths as the agent used them on the machine where it ran, so they are matched by
the part that survives a move: a knowledge file is keyed by its path inside the kb directory
(``api/auth.md``), and a trace path — taken relative to the session's cwd, or absolute when
outside it — is an access of that file when it ends with ``<kb dir name>/<key>`` at a folder
boundary (``docs/kb/api/auth.md`` and ``/srv/app/docs/kb/api/auth.md`` both access
``api/auth.md`` of ``--kb docs/kb``). A file of the same name in another folder never matches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from knowmeter.errors import InputError

if TYPE_CHECKING:
    from knowmeter.analysis import KnowledgeFile


@dataclass(frozen=True, slots=True)
class KbIndex:
    """``<kb dir name>/<key or alias>`` → key, for every knowledge file of the kb."""

    name: str
    keys: Mapping[str, str]

    def match(self, access_key: str) -> str | None:
        """The knowledge-file key ``access_key`` (a path key from ``accessed_files``) reads, if any."""
        parts = access_key.split("/")
        for i in range(len(parts) - 1):
            if parts[i] == self.name:
                hit = self.keys.get("/".join(parts[i:]))
                if hit is not None:
                    return hit
        return None

    def map_accesses(self, accesses: Mapping[str, int]) -> dict[str, int]:
        """Per-task access counts of trace paths → counts by knowledge-file key (others dropped)."""
        out: dict[str, int] = {}
        for key, n in accesses.items():
            hit = self.match(key)
            if hit is not None:
                out[hit] = out.get(hit, 0) + n
        return out


def load_kb(kb: Path) -> tuple[list[KnowledgeFile], KbIndex]:
    """The knowledge files under ``kb`` (keyed relative to it) and their index."""
    from knowmeter.analysis import knowledge_files

    if not kb.is_dir():
        what = "it is a file" if kb.exists() else "not found"
        raise InputError(f"{kb}: --kb must be a folder of knowledge files; {what}")
    root = kb.resolve()
    files = knowledge_files(root, knowledge_dirs=[root])
    if not files:
        raise InputError(f"{kb}: --kb folder holds no knowledge files (hidden files and caches are skipped)")
    keys: dict[str, str] = {}
    for f in files:
        for k in (f.path, *f.aliases):
            if not k.startswith(("/", "../")):
                keys.setdefault(f"{root.name}/{k}", f.path)
    return files, KbIndex(root.name, keys)
