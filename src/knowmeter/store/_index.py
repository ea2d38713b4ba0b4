"""The SQLite index of runs (``<output>/index.sqlite``), with named, append-only migrations."""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from knowmeter import defaults, jsonio
from knowmeter._damaged import set_aside
from knowmeter._faults import environment_fault
from knowmeter._secrets import scrub_value
from knowmeter.errors import InputError
from knowmeter.store._rundir import RESULTS_FILE, RUN_FILE, RunDir

INDEX_FILE = "index.sqlite"
RUN_COLUMNS = (
    "id",
    "created_at",
    "finished_at",
    "status",
    "dir",
    "git_commit",
    "git_dirty",
    "executor",
    "model",
    "sample_set_id",
    "sample_set_sha",
    "sample_count",
    "verdict",
    "outcome",
    "tasks_total",
    "tasks_done",
    "cost_known_usd",
    "cost_unknown_tasks",
    "shard",
    "sample_set_kind",
)
VARIANT_COLUMNS = (
    "run_id",
    "variant",
    "role",
    "artifact_hash",
    "composite",
    "layer_set",
    "coverage",
    "gap_rate",
    "weighted_gap_rate",
    "tasks",
    "errors",
    "cost_known_usd",
    "cost_unknown_tasks",
)

log = logging.getLogger("knowmeter")

#: A run directory → its index rows (the run's, its variants'); ``InputError`` when unreadable.
RowsOf = Callable[[Path], tuple[dict[str, Any], list[dict[str, Any]]]]

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
    (
        "003_shard",
        """
        ALTER TABLE runs ADD COLUMN shard TEXT;
        """,
    ),
    (
        "004_sample_set_kind",
        """
        ALTER TABLE runs ADD COLUMN sample_set_kind TEXT;
        """,
    ),
]


@contextmanager
def open_index(output_dir: Path, *, rows_of: RowsOf | None = None) -> Iterator[sqlite3.Connection]:
    """Open (creating and migrating) the index; commits on success. A damaged index (not a
    database, truncated, tables missing) is moved aside and rebuilt from the run directories
    with ``rows_of`` (a run directory → its rows; ``knowmeter.report.open_run_index`` passes
    the stored report's): it is only an index."""
    path = output_dir / INDEX_FILE
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        conn, fresh = _connect(path)
        if fresh and (output_dir / "runs").is_dir():  # deleted or emptied: index what is there
            _rebuild(conn, output_dir / "runs", rows_of)
    except (OSError, sqlite3.DatabaseError) as exc:
        if environment_fault(exc) is not None:  # a full disk, a read-only folder, a lock held: go on without it
            conn = _in_memory(output_dir / "runs", rows_of)
            log.warning("knowmeter: %s cannot be written (%s); its runs are read from their folders", path, exc)
        elif isinstance(exc, sqlite3.DatabaseError):
            conn = _set_aside_and_rebuild(path, output_dir / "runs", rows_of, exc)
        else:
            raise
    try:
        yield conn
        conn.commit()
    finally:
        conn.close()


def _set_aside_and_rebuild(path: Path, runs_root: Path, rows_of: RowsOf | None, exc: Exception) -> sqlite3.Connection:
    """A damaged index moved aside and built again from the run directories (said in a warning)."""
    damaged = set_aside(path)
    conn, _ = _connect(path)
    n = _rebuild(conn, runs_root, rows_of)
    log.warning(
        "knowmeter: %s was damaged (%s): moved to %s and rebuilt from %d run director%s",
        path,
        exc,
        damaged.name,
        n,
        "y" if n == 1 else "ies",
    )
    return conn


def _in_memory(runs_root: Path, rows_of: RowsOf | None) -> sqlite3.Connection:
    """An index in memory, built from the run directories (the one on disk cannot be written)."""
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    _migrate(conn)
    _rebuild(conn, runs_root, rows_of)
    return conn


def _connect(path: Path) -> tuple[sqlite3.Connection, bool]:
    """Open, migrate and check the index, and whether it was created just now; raises
    ``sqlite3.DatabaseError`` when it is damaged."""
    conn = sqlite3.connect(path, timeout=defaults.SQLITE_TIMEOUT_S)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        fresh = _migrate(conn)
        for table, cols in (("runs", RUN_COLUMNS), ("run_variants", VARIANT_COLUMNS)):
            conn.execute(f"SELECT {', '.join(cols)} FROM {table} LIMIT 1").fetchall()
        if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise sqlite3.DatabaseError("integrity check failed")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn, fresh


def _rebuild(conn: sqlite3.Connection, runs_root: Path, rows_of: RowsOf | None) -> int:
    """Index every run directory under ``runs_root`` whose report.json is readable."""
    if rows_of is None:
        return 0
    n = 0
    for report_file in sorted(runs_root.glob("*/report.json")):
        try:
            upsert_run(conn, *rows_of(report_file.parent))
        except (InputError, sqlite3.Error):
            continue  # a damaged report: `knowmeter report RUN` rebuilds it and indexes it again
        n += 1
    conn.commit()
    return n


def _migrate(conn: sqlite3.Connection) -> bool:
    """Apply the migrations not applied yet; True when the index was empty (all were new)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT "
        "DEFAULT CURRENT_TIMESTAMP)"
    )
    applied = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    for name, sql in MIGRATIONS:
        if name in applied:
            continue
        conn.executescript("BEGIN;" + sql + f"INSERT INTO schema_migrations(name) VALUES ('{name}');COMMIT;")
    return not applied


def upsert_run(conn: sqlite3.Connection, run: dict[str, Any], variants: list[dict[str, Any]]) -> None:
    """Insert or replace a run row and its per-variant rows (secrets scrubbed from their text)."""
    run = scrub_value(run)
    variants = scrub_value(variants)
    cols = ", ".join(run)
    marks = ", ".join(f":{k}" for k in run)
    conn.execute(f"INSERT OR REPLACE INTO runs ({cols}) VALUES ({marks})", run)
    conn.execute("DELETE FROM run_variants WHERE run_id = ?", (run["id"],))
    for v in variants:
        vcols = ", ".join(v)
        vmarks = ", ".join(f":{k}" for k in v)
        conn.execute(f"INSERT INTO run_variants ({vcols}) VALUES ({vmarks})", v)


def list_runs(
    conn: sqlite3.Connection, limit: int = 50, runs_root: Path | None = None, unreadable: list[str] | None = None
) -> list[dict[str, Any]]:
    """The newest ``limit`` runs, newest first: the index's rows and, with ``runs_root``, the run
    directories there that have no row yet (``unindexed_runs``; those whose run.json cannot be
    read are named in ``unreadable``)."""
    rows = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY created_at DESC, id DESC LIMIT ?", (limit,))]
    if runs_root is not None:
        indexed = {r[0] for r in conn.execute("SELECT id FROM runs")}
        rows += unindexed_runs(runs_root, indexed, unreadable)
    rows.sort(key=lambda r: (r["created_at"] or "", r["id"]), reverse=True)
    return rows[:limit]


def listed_status(run_path: Path, status: str | None) -> str:
    """The status a run is listed with, from its run.json ``status``: a run that never finished
    (None, or ``running`` — run.json still says so when its process was killed by kill -9) is
    ``running`` while a process holds its lock, else ``killed`` (as ``incompleteness`` reads it)."""
    if status not in ("running", None):
        return status
    return "running" if RunDir(run_path).executing else "killed"


def unindexed_runs(runs_root: Path, indexed: set[str], unreadable: list[str] | None = None) -> list[dict[str, Any]]:
    """Run directories under ``runs_root`` not in ``indexed``, as ``runs`` rows from their run.json:
    a run gets its row when it finishes, so these are still running (status ``running``: a
    process holds the run's lock) or were killed (``killed``) — or finished (the status run.json
    gives) with a report.json the index could not read. Their outcome is not known (None); tasks
    done counts the stored results. A run.json that cannot be read is skipped, its folder's name
    added to ``unreadable`` (``knowmeter report RUN`` names its problem)."""
    rows = []
    for run_file in sorted(runs_root.glob(f"*/{RUN_FILE}")):
        run_path = run_file.parent
        if run_path.name in indexed:
            continue
        try:
            run = RunDir(run_path).read_run()
        except InputError:
            if unreadable is not None:
                unreadable.append(run_path.name)
            continue
        shard = run.shard
        row = {
            **dict.fromkeys(RUN_COLUMNS),
            "id": run_path.name,
            "created_at": run.created_at,
            "status": listed_status(run_path, run.status),
            "dir": str(run_path.resolve()),
            "executor": run.executor.name,
            "sample_set_id": run.watermark.id,
            "tasks_total": run.tasks_total,
            "tasks_done": _stored_tasks(run_path / RESULTS_FILE),
            "cost_unknown_tasks": 0,
            "shard": f"{shard.index}/{shard.count}" if shard else None,
        }
        rows.append(row)
    return rows


_TASK_ID = re.compile(rb'^\{\s*"task_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _stored_tasks(results: Path) -> int:
    """Tasks with a complete line in a results file (a line cut by a kill has no newline; a task
    stored twice — a duplicate line — counts once). The id is read from the line's start, where
    knowmeter writes it; another line is parsed."""
    ids: set[object] = set()
    try:
        with results.open("rb") as fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    continue
                m = _TASK_ID.match(line)
                ids.add(m.group(1) if m else _task_id_of(line))
    except OSError:
        return 0
    ids.discard(None)
    return len(ids)


def _task_id_of(line: bytes) -> bytes | None:
    try:
        record = jsonio.loads(line)
    except ValueError:
        return None
    tid = record.get("task_id") if isinstance(record, dict) else None
    return tid.encode() if isinstance(tid, str) else None


def variant_history(
    conn: sqlite3.Connection, *, variant: str | None = None, sample_set_id: str | None = None
) -> list[sqlite3.Row]:
    """Per-variant rows joined with their run, oldest first (the trends table). A shard's run
    covers only part of the sample set: it is left out (its merged run stands for it)."""
    sql = (
        "SELECT r.id AS run_id, r.created_at, r.git_commit, r.git_dirty, r.sample_set_id, r.sample_count, "
        "r.status, COALESCE(r.sample_set_kind, 'human') AS sample_set_kind, v.* "
        "FROM run_variants v JOIN runs r ON r.id = v.run_id WHERE r.status = 'complete' "
        "AND r.shard IS NULL"
    )
    args: list[Any] = []
    if variant is not None:
        sql += " AND v.variant = ?"
        args.append(variant)
    if sample_set_id is not None:
        sql += " AND (r.sample_set_id = ? OR r.sample_set_sha LIKE ?)"
        args.extend([sample_set_id, f"{sample_set_id}%"])
    sql += " ORDER BY r.created_at, r.id"
    return list(conn.execute(sql, args))
