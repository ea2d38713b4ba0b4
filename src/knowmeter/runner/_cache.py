"""The response cache (SQLite): successful executor results keyed by everything that shapes
them. Errors are never cached; repeats are real replicates (the repeat index is in the key)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from knowmeter.executors import ExecResult

CACHE_FILE = "cache.sqlite"


def cache_key(
    *, executor: str, model: str | None, variant: str, artifact_hash: str, prompt: str, context: str | None,
    workspace_fingerprint: str, repeat: int,
) -> str:
    """The variant's name is part of the key: two arms with the same artifact (an A/A test) are
    independent runs, never one answer served twice."""
    payload = {"executor": executor, "model": model, "variant": variant, "artifact": artifact_hash, "prompt": prompt,
               "context": context, "cwd": workspace_fingerprint, "repeat": repeat}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class ResponseCache:
    """A small SQLite key → ExecResult store; commits in batches (a lost batch only costs a
    re-run, never a wrong answer)."""

    def __init__(self, output_dir: Path, *, commit_every: int = 64) -> None:
        output_dir.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(output_dir / CACHE_FILE, timeout=30, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, result TEXT NOT NULL, "
                           "created_at REAL NOT NULL)")
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
        self.hits += 1
        data: dict[str, Any] = json.loads(row[0])
        return ExecResult.from_dict(data)

    def put(self, key: str, result: ExecResult) -> None:
        if result.error is not None:
            return
        if not self._in_tx:
            self._conn.execute("BEGIN")
            self._in_tx = True
        self._conn.execute("INSERT OR REPLACE INTO responses (key, result, created_at) VALUES (?, ?, ?)",
                           (key, json.dumps(result.to_dict(), ensure_ascii=False), time.time()))
        self._pending += 1
        if self._pending >= self._commit_every:
            self.flush()

    def flush(self) -> None:
        if self._in_tx:
            self._conn.execute("COMMIT")
            self._in_tx = False
        self._pending = 0

    def close(self) -> None:
        self.flush()
        self._conn.close()
