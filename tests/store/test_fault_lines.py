"""Which exceptions are faults of the machine, and the one line each gets (``knowmeter._faults``),
and the error line itself: cut at a readable length, the whole message (a lone surrogate
included) in a log file."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from knowmeter._faults import environment_fault, stops_every_task
from knowmeter.cli._errors import MAX_LINE_CHARS, error_line
from tests.support.cli import km_process


def test_a_full_disk_inside_a_task_group_names_the_run_to_resume(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "20260101-000000-abcdef"
    run.mkdir(parents=True)
    (run / "run.json").write_text("{}")
    full = OSError(errno.ENOSPC, "No space left on device", str(run / "results.jsonl"))
    group = ExceptionGroup("unhandled errors in a TaskGroup", [RuntimeError("x"), full])
    line = environment_fault(group)
    assert line is not None and "no space left" in line and "--resume 20260101-000000-abcdef" in line


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (OSError(errno.EROFS, "Read-only file system", "/x/report.json"), "read-only"),
        (OSError(errno.EACCES, "Permission denied", "/x/.lock"), "permission denied"),
        (OSError(errno.ENAMETOOLONG, "File name too long", "a" * 5000), "too long"),
        (ValueError("embedded null byte"), "NUL"),
        (NotADirectoryError(errno.ENOTDIR, "Not a directory", "notes.txt/activation"), "a file stands where a folder"),
        (sqlite3.OperationalError("database or disk is full"), "no space left"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "read-only"),
        (OSError(errno.EMFILE, "Too many open files", "/x/agent.sh"), "too many open files"),
        (OSError(errno.ENFILE, "Too many open files in system"), "table of open files is full"),
        (MemoryError(), "out of memory"),
        (OSError(errno.ENOMEM, "Cannot allocate memory"), "out of memory"),
        (ImportError("numpy failed: libopenblas.so: failed to map segment from shared object"), "out of memory"),
    ],
)
def test_machine_faults_get_one_line(exc: BaseException, words: str) -> None:
    line = environment_fault(exc)
    assert line is not None and words in line and "\n" not in line and len(line) < 600


def test_a_fault_behind_another_error_is_found_and_a_bug_is_not_a_fault() -> None:
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError:
            raise sqlite3.OperationalError("cannot commit - no transaction is active") from None
    except sqlite3.OperationalError as exc:
        hidden = exc
    hidden.__context__ = OSError(errno.ENOSPC, "No space left on device")
    assert "no space left" in (environment_fault(hidden) or "")
    assert environment_fault(KeyError("x")) is None and environment_fault(ValueError("bad")) is None


def test_a_long_error_line_is_cut_and_kept_whole_in_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    message = "bad value " + "\ud800" + "y" * 10_000 + " END"
    line = error_line(message)
    assert line.startswith("knowmeter: error: bad value \\ud800") and len(line) < MAX_LINE_CHARS + 200
    (log,) = tmp_path.glob("knowmeter-error-*.log")
    assert str(log) in line and log.read_text().endswith(" END")


def test_what_every_later_task_would_hit_stops_a_run_and_nothing_else_does() -> None:
    group = ExceptionGroup("unhandled errors in a TaskGroup", [OSError(errno.EMFILE, "Too many open files")])
    assert stops_every_task(group) and stops_every_task(OSError(errno.ENOSPC, "No space left on device"))
    assert stops_every_task(OSError(errno.ENFILE, "Too many open files in system"))
    # one task's own trouble (an agent that is not there or not executable) is that task's failure
    assert not stops_every_task(OSError(errno.ENOENT, "No such file or directory", "/x/agent"))
    assert not stops_every_task(PermissionError(errno.EACCES, "Permission denied", "/x/agent"))
    assert not stops_every_task(KeyError("x"))


def test_init_into_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    r = km_process("init", "notes.txt", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("knowmeter: error: a file stands where a folder is needed (notes.txt/"), r.stderr
