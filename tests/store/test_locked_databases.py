"""A database another process holds locked past the busy timeout (a DB browser's open write
transaction, a backup) is not damage: the run index is read from the run folders this once and
the response cache refuses with one line — neither is moved aside as ``*.damaged`` (which also
deleted the holder's journal). Real SQLite files, locked by a real second connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowmeter import defaults
from knowmeter._faults import environment_fault
from knowmeter.runner._cache import CACHE_FILE, ResponseCache
from knowmeter.store import INDEX_FILE, open_index


@pytest.fixture(autouse=True)
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "SQLITE_TIMEOUT_S", 0.1)


def held(path: Path) -> Iterator[sqlite3.Connection]:
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")  # (a WAL file's readers are shut out too)
    holder.execute("CREATE TABLE IF NOT EXISTS held (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield holder
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_locked_index_is_read_from_the_run_folders_and_left_where_it_is(tmp_path: Path) -> None:
    with open_index(tmp_path):  # a healthy index
        pass
    for _ in held(tmp_path / INDEX_FILE):
        with open_index(tmp_path) as conn:
            assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0  # (in memory)
        assert not (tmp_path / f"{INDEX_FILE}.damaged").exists()
    with open_index(tmp_path) as conn:  # the file itself, unharmed
        assert conn.execute("SELECT COUNT(*) FROM held").fetchone()[0] == 0


def test_a_locked_cache_is_one_line_and_left_where_it_is(tmp_path: Path) -> None:
    ResponseCache(tmp_path).close()
    for _ in held(tmp_path / CACHE_FILE):
        with pytest.raises(sqlite3.OperationalError) as raised:
            ResponseCache(tmp_path)
        line = environment_fault(raised.value) or ""
        assert line.startswith("a knowmeter database (the run index or the response cache) is locked by another")
        assert not (tmp_path / f"{CACHE_FILE}.damaged").exists()
