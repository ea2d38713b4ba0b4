"""The session files under the paths given to ``observe``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from knowmeter.errors import InputError
from knowmeter.traces import sniff

_WHAT = "a Claude Code projects folder (~/.claude/projects), session .jsonl files, or a Codex sessions folder"


#: Folders beside a Claude session file that hold no sessions of their own.
_NOT_SESSIONS = frozenset({"subagents", "tool-results"})


def _jsonl_files(root: Path) -> list[Path]:
    """Every ``*.jsonl`` file under ``root`` outside subagent / tool-output folders, sorted."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _NOT_SESSIONS]
        out.extend(Path(dirpath, f) for f in filenames if f.endswith(".jsonl"))
    return sorted(p for p in out if p.is_file())


def session_jobs(paths: Sequence[Path]) -> list[tuple[Path, str]]:
    """``(file, key)`` for every candidate session file: a file given directly (it must be an agent
    trace), or every ``*.jsonl`` under a folder except subagent transcripts (``…/subagents/…``,
    read with their session). ``key`` is the path relative to the folder given (the file's name for
    a file): what the watermark hashes, so a moved trace folder keeps its fingerprint. A file
    reached twice is scanned once."""
    jobs: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for root in paths:
        if not root.exists():
            raise InputError(f"{root}: no such file or folder; pass {_WHAT}")
        if root.is_file():
            sniff(root)  # a file named on the command line must be a trace: say so now, in one line
            found = [(root, root.name)]
        else:
            found = [(p, p.relative_to(root).as_posix()) for p in _jsonl_files(root)]
        for path, key in found:
            real = path.resolve()
            if real not in seen:
                seen.add(real)
                jobs.append((path, key))
    if not jobs:
        raise InputError(f"{', '.join(map(str, paths))}: no .jsonl session files found; pass {_WHAT}")
    return jobs
