"""The session files under the paths given to ``observe``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from knowmeter.errors import InputError
from knowmeter.traces import sniff

_WHAT = "a Claude Code projects folder (~/.claude/projects), session .jsonl files, or a Codex sessions folder"


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
            found = [(p, p.relative_to(root).as_posix()) for p in sorted(root.rglob("*.jsonl"))
                     if "subagents" not in p.relative_to(root).parts and p.is_file()]
        for path, key in found:
            real = path.resolve()
            if real not in seen:
                seen.add(real)
                jobs.append((path, key))
    if not jobs:
        raise InputError(f"{', '.join(map(str, paths))}: no .jsonl session files found; pass {_WHAT}")
    return jobs
