"""results.jsonl reaches the disk at a steady cadence: every line is flushed at once (a kill
loses nothing), the file is fsynced at most every ``FSYNC_EVERY_S`` while a run appends and
always on close (a power loss loses at most that long of a run)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from knowmeter.store import _rundir
from knowmeter.store._rundir import ResultsWriter
from tests.support.records import task_record


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def counted(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    return calls


def test_fsync_cadence(tmp_path: Path, fsyncs: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        for i in range(10):  # ten lines within one second: flushed each, not fsynced yet
            writer.append(task_record(str(i)))
            assert path.read_bytes().count(b"\n") == i + 1
        assert fsyncs == []
        now[0] += _rundir.FSYNC_EVERY_S
        writer.append(task_record("late"))  # a second later: fsynced
        assert len(fsyncs) == 1
        writer.append(task_record("again"))
        assert len(fsyncs) == 1
    assert len(fsyncs) == 2  # and on close
