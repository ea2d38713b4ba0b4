"""The SQLite index of runs (``<output>/index.sqlite``), with named, append-only migrations."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

INDEX_FILE = "index.sqlite"

#: (name, SQL). Append new migrations; never edit or reorder applied ones.
MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_runs",
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,
            dir TEXT NOT NULL,
            git_commit TEXT,
            git_dirty INTEGER,
            executor TEXT,
            model TEXT,
            sample_set_id TEXT,
            sample_set_sha TEXT,
            sample_count INTEGER,
            verdict TEXT,
            tasks_total INTEGER,
            tasks_done INTEGER,
            cost_known_usd REAL,
            cost_unknown_tasks INTEGER
        );
        CREATE TABLE run_variants (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            variant TEXT NOT NULL,
            role TEXT,
            artifact_hash TEXT,
            composite REAL,
            coverage REAL,
            gap_rate REAL,
            weighted_gap_rate REAL,
            tasks INTEGER,
            errors INTEGER,
            cost_known_usd REAL,
            cost_unknown_tasks INTEGER,
            PRIMARY KEY (run_id, variant)
        );
        CREATE INDEX run_variants_by_variant ON run_variants(variant);
        CREATE INDEX runs_by_sample_set ON runs(sample_set_id, created_at);
        """,
    ),
    (
        "002_outcome_layer_set",
        """
        ALTER TABLE runs ADD COLUMN outcome TEXT;
        ALTER TABLE run_variants ADD COLUMN layer_set TEXT;
        """,
    ),
]


@contextmanager
def open_index(output_dir: Path) -> Iterator[sqlite3.Connection]:
    """Open (creating and migrating) the index; commits on success."""
    output_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(output_dir / INDEX_FILE, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn)
        yield conn
        conn.commit()
    finally:
        conn.close()


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT "
                 "DEFAULT CURRENT_TIMESTAMP)")
    applied = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    for name, sql in MIGRATIONS:
        if name in applied:
            continue
        conn.executescript("BEGIN;" + sql + f"INSERT INTO schema_migrations(name) VALUES ('{name}');COMMIT;")


def upsert_run(conn: sqlite3.Connection, run: dict[str, Any], variants: list[dict[str, Any]]) -> None:
    """Insert or replace a run row and its per-variant rows."""
    cols = ", ".join(run)
    marks = ", ".join(f":{k}" for k in run)
    conn.execute(f"INSERT OR REPLACE INTO runs ({cols}) VALUES ({marks})", run)
    conn.execute("DELETE FROM run_variants WHERE run_id = ?", (run["id"],))
    for v in variants:
        vcols = ", ".join(v)
        vmarks = ", ".join(f":{k}" for k in v)
        conn.execute(f"INSERT INTO run_variants ({vcols}) VALUES ({vmarks})", v)


def list_runs(conn: sqlite3.Connection, limit: int = 50) -> list[sqlite3.Row]:
    return list(conn.execute("SELECT * FROM runs ORDER BY created_at DESC, id DESC LIMIT ?", (limit,)))


def variant_history(
    conn: sqlite3.Connection, *, variant: str | None = None, sample_set_id: str | None = None
) -> list[sqlite3.Row]:
    """Per-variant rows joined with their run, oldest first (the trends table)."""
    sql = ("SELECT r.id AS run_id, r.created_at, r.git_commit, r.git_dirty, r.sample_set_id, r.sample_count, "
           "r.status, v.* FROM run_variants v JOIN runs r ON r.id = v.run_id WHERE r.status = 'complete'")
    args: list[Any] = []
    if variant is not None:
        sql += " AND v.variant = ?"
        args.append(variant)
    if sample_set_id is not None:
        sql += " AND (r.sample_set_id = ? OR r.sample_set_sha LIKE ?)"
        args.extend([sample_set_id, f"{sample_set_id}%"])
    sql += " ORDER BY r.created_at, r.id"
    return list(conn.execute(sql, args))
