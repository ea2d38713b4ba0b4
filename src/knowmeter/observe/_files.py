"""The session files under the paths given to ``observe``."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from knowmeter.errors import InputError
from knowmeter.traces import TRACE_FILE_SUFFIXES, sniff

_WHAT = "a Claude Code projects folder (~/.claude/projects), session .jsonl files, or a Codex sessions folder"


def _session_file_in(session_file: str, root: Path) -> bool:
    """The session file a ``subagents`` folder belongs to is there, among the files under ``root``."""
    return os.path.isfile(session_file) and Path(session_file).is_relative_to(root)


def _candidate_files(root: Path, unreadable: list[str]) -> list[tuple[Path, os.stat_result]]:
    """Every file under ``root`` named like a trace (``TRACE_FILE_SUFFIXES``: ``*.jsonl``, but also
    ``agent_log_raw.txt`` …; the scan tells traces by content and reports the rest as skipped)
    outside tool-output folders and the subagent folders of a session file that is there (those
    are read with it; an *orphan* ``<session>/subagents`` folder, whose session file is absent,
    is listed: its transcripts are sessions of their own), sorted, with its ``stat`` (one system call per file:
    it tells a file from anything else and identifies it). A folder that cannot be listed is
    added to ``unreadable`` (a line naming it), not passed over in silence."""

    def note(exc: OSError) -> None:
        unreadable.append(
            f"{exc.filename}: cannot read the folder ({exc.strerror}); the sessions in it are left out — "
            "check its permissions"
        )

    out: list[tuple[Path, os.stat_result]] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=note):
        if os.path.basename(dirpath) == "subagents" and _session_file_in(os.path.dirname(dirpath) + ".jsonl", root):
            dirnames[:] = []
            continue  # read with their session
        dirnames[:] = [d for d in dirnames if d != "tool-results"]
        for name in filenames:
            if name.endswith(TRACE_FILE_SUFFIXES):
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:  # a dangling link, or gone since the listing
                    continue
                if stat.S_ISREG(st.st_mode):
                    out.append((Path(path), st))
    out.sort(key=lambda item: item[0])
    return out


def _found(root: Path, unreadable: list[str]) -> list[tuple[Path, str, os.stat_result]]:
    """The candidate files a path given names, with their keys (see ``session_jobs``)."""
    if not root.exists():
        raise InputError(f"{root}: no such file or folder; pass {_WHAT}")
    if root.is_file():
        try:  # a file named on the command line that is no trace is skipped with one line
            sniff(root)
            return [(root, root.name, root.stat())]
        except InputError as exc:
            unreadable.append(str(exc).splitlines()[0])
        except OSError as exc:
            unreadable.append(f"{root}: cannot read ({exc.strerror or exc}); check its permissions")
        return []
    if not root.is_dir():  # a named pipe or a device: reading it could wait forever
        unreadable.append(f"{root}: a named pipe or a device, not a trace file or folder; pass {_WHAT}")
        return []
    return [(p, p.relative_to(root).as_posix(), st) for p, st in _candidate_files(root, unreadable)]


def is_orphan_subagent(key: str) -> bool:
    """A job key (see ``session_jobs``) of a subagent transcript whose session file is absent."""
    return "subagents" in Path(key).parts[:-1]


def session_jobs(paths: Sequence[Path], unreadable: list[str] | None = None) -> list[tuple[Path, str]]:
    """``(file, key)`` for every candidate session file: a file given directly (it must be an agent
    trace), or every candidate file (``_candidate_files``) under a folder except subagent
    transcripts (``…/subagents/…``, read with their session). ``key`` is the path relative to the
    folder given (the file's name for a file): what the watermark hashes, so a moved trace folder
    keeps its fingerprint. A file reached twice (overlapping folders, links) is scanned once.
    Folders that cannot be listed, and files given directly that are empty, foreign or unreadable,
    are named in ``unreadable`` (one line each) when it is given; ``InputError`` (the first such
    line) only when nothing is left to read."""
    unreadable = [] if unreadable is None else unreadable
    jobs: list[tuple[Path, str]] = []
    seen: set[tuple[int, int]] = set()
    for root in paths:
        try:
            found = _found(root, unreadable)
        except OSError as exc:  # a file or folder this user may not read, a device that fails
            raise InputError(f"{root}: cannot read ({exc.strerror or exc}); check its permissions") from None
        for path, key, st in found:
            identity = (st.st_dev, st.st_ino)
            if identity not in seen:
                seen.add(identity)
                jobs.append((path, key))
    if not jobs and unreadable:
        raise InputError(unreadable[0])
    if not jobs:
        names = ", ".join(f"*{suffix}" for suffix in TRACE_FILE_SUFFIXES)
        raise InputError(f"{', '.join(map(str, paths))}: no session files found ({names}); pass {_WHAT}")
    return jobs
