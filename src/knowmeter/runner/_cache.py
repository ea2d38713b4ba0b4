"""The response cache (SQLite): successful executor results keyed by everything that shapes
them. Errors are never cached; repeats are real replicates (the repeat index is in the key).

Big texts are stored once: every string of ``BLOB_MIN_CHARS`` or more in a result (the output,
and the same text again as the trace's last message, a long tool output …) goes to the
``blobs`` table under its sha256 and the entry holds a reference, so an answer repeated in the
trace, or returned again by another task, takes its space once."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowmeter import defaults
from knowmeter._damaged import set_aside
from knowmeter._faults import environment_fault
from knowmeter._secrets import scrub_value
from knowmeter.executors import ExecResult

if TYPE_CHECKING:
    from knowmeter.runner._plan import Task

log = logging.getLogger("knowmeter")

CACHE_FILE = "cache.sqlite"
#: Strings at least this long are stored once, by content (see the module docstring).
BLOB_MIN_CHARS = 64 * 1024
_BLOB = "\u0000blob"  # the key of a reference: {_BLOB: sha256}; no JSON a result holds has it


def cache_key(
    *,
    executor: str,
    model: str | None,
    variant: str,
    artifact_hash: str,
    prompt: str,
    context: str | None,
    workspace_fingerprint: str,
    repeat: int,
    skills: list[str] | None = None,
) -> str:
    """The variant's name is part of the key: two arms with the same artifact (an A/A test) are
    independent runs, never one answer served twice. ``skills`` are the texts of the skills
    installed beside the variant's (absent from the key when there are none, so keys made before
    they existed still match)."""
    payload: dict[str, object] = {
        "executor": executor,
        "model": model,
        "variant": variant,
        "artifact": artifact_hash,
        "prompt": prompt,
        "context": context,
        "cwd": workspace_fingerprint,
        "repeat": repeat,
    }
    if skills:
        payload["skills"] = skills
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def task_cache_key(task: Task, executor_identity: str, model: str | None, fingerprint: Callable[[Path], str]) -> str:
    """The cache key of a planned task (``fingerprint``: a workspace's content fingerprint)."""
    return cache_key(
        executor=executor_identity,
        model=model,
        variant=task.variant.name,
        artifact_hash=task.variant.artifact.hash,
        prompt=task.sample.prompt,
        context=task.sample.context,
        workspace_fingerprint=fingerprint(task.workspace),
        repeat=task.repeat,
        skills=[s.text for s in task.skills],
    )


class ResponseCache:
    """A small SQLite key → ExecResult store; commits in batches (a lost batch only costs a
    re-run, never a wrong answer)."""

    def __init__(self, output_dir: Path, *, commit_every: int = 64) -> None:
        """A damaged cache file (not a database, truncated) is moved aside to
        ``cache.sqlite.damaged`` with a one-line note and the cache starts empty: it only saves
        re-running tasks."""
        output_dir.mkdir(parents=True, exist_ok=True)
        path = output_dir / CACHE_FILE
        try:
            self._conn = _connect(path)
        except sqlite3.DatabaseError as exc:
            if environment_fault(exc) is not None:  # locked by another process, a full disk: not damage
                raise
            damaged = set_aside(path)
            log.warning("knowmeter: %s was damaged (%s): moved to %s; the cache starts empty", path, exc, damaged.name)
            self._conn = _connect(path)
        self._pending = 0
        self._commit_every = commit_every
        self._in_tx = False
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> ExecResult | None:
        row = self._conn.execute("SELECT result FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        try:
            data: dict[str, Any] = self._restore(json.loads(row[0]))
        except KeyError:  # a big text missing from a damaged cache: the task runs again
            self.misses += 1
            return None
        self.hits += 1
        return ExecResult.from_dict(data)

    def has(self, key: str) -> bool:
        """Whether an answer is stored under ``key`` (counts no hit or miss)."""
        return self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def put(self, key: str, result: ExecResult) -> None:
        if result.error is not None:
            return
        if not self._in_tx:
            self._conn.execute("BEGIN")
            self._in_tx = True
        self._conn.execute(
            "INSERT OR REPLACE INTO responses (key, result, created_at) VALUES (?, ?, ?)",
            (key, json.dumps(self._shrink(scrub_value(result.to_dict())), ensure_ascii=False), time.time()),
        )
        self._pending += 1
        if self._pending >= self._commit_every:
            self.flush()

    def _shrink(self, value: Any) -> Any:
        """``value`` with every big string stored in ``blobs`` and replaced by its reference."""
        if isinstance(value, str) and len(value) >= BLOB_MIN_CHARS:
            sha = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
            self._conn.execute("INSERT OR IGNORE INTO blobs (sha256, text) VALUES (?, ?)", (sha, value))
            return {_BLOB: sha}
        if isinstance(value, dict):
            return {k: self._shrink(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._shrink(v) for v in value]
        return value

    def _restore(self, value: Any) -> Any:
        """``value`` with every blob reference replaced by its text (``_shrink`` undone)."""
        if isinstance(value, dict):
            if len(value) == 1 and _BLOB in value:
                row = self._conn.execute("SELECT text FROM blobs WHERE sha256 = ?", (value[_BLOB],)).fetchone()
                if row is None:
                    raise KeyError(value[_BLOB])
                return row[0]
            return {k: self._restore(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._restore(v) for v in value]
        return value

    def flush(self) -> None:
        if self._in_tx:
            self._conn.execute("COMMIT")
            self._in_tx = False
        self._pending = 0

    def close(self) -> None:
        self.flush()
        self._conn.close()


def _connect(path: Path) -> sqlite3.Connection:
    """Open (creating) and check the cache; raises ``sqlite3.DatabaseError`` when it is damaged."""
    conn = sqlite3.connect(path, timeout=defaults.SQLITE_TIMEOUT_S, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, result TEXT NOT NULL, "
            "created_at REAL NOT NULL)"
        )
        conn.execute("CREATE TABLE IF NOT EXISTS blobs (sha256 TEXT PRIMARY KEY, text TEXT NOT NULL)")
        if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise sqlite3.DatabaseError("integrity check failed")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn
