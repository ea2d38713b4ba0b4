"""Faults of the machine — a full disk, a read-only folder — are one line and exit 2 saying what
to do (free space, make it writable), never an internal error; what was written stays, and once
the disk has room a resume finishes the run. The store lives on a small tmpfs mounted for the
test (root only: skipped with the reason otherwise)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import init_demo, km_process

pytestmark = pytest.mark.slow


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 200 KB tmpfs (a disk that fills during a demo run), unmounted after the test."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(mnt)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _remount(mnt: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(mnt)], check=True)


def _one_line(stderr: str, *words: str) -> str:
    line = stderr.strip().splitlines()[-1]
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    assert line.startswith("knowmeter: error: ") and all(w in line for w in words), stderr
    return line


def test_full_disk_then_resume(tmp_path: Path, small_fs: Path) -> None:
    project = init_demo(tmp_path / "p")
    out = str(small_fs / "out")
    full = km_process("eval", "--report-only", "--output-dir", out, cwd=project)
    assert full.returncode == 2, full.stderr
    line = _one_line(full.stderr, "no space left", "free space", "--resume")
    run_dir = next((small_fs / "out" / "runs").iterdir())
    assert run_dir.name in line and "results.jsonl" in line
    kept = (run_dir / "results.jsonl").read_bytes()
    kept = kept[: kept.rfind(b"\n") + 1]  # a line cut by the full disk is dropped by the resume
    assert kept.count(b"\n") >= 1  # the tasks finished before the disk filled are stored

    listed = km_process("runs", "--output-dir", out, cwd=project)  # the index cannot be written
    assert listed.returncode == 0 and run_dir.name in listed.stdout, listed.stderr
    assert "internal error" not in listed.stderr
    assert not list((small_fs / "out").glob("*.damaged"))  # a full disk is not a damaged index

    _remount(small_fs, "size=20m")  # space freed: the resume finishes the run
    resumed = km_process("eval", "--report-only", "--output-dir", out, "--resume", run_dir.name, cwd=project)
    assert resumed.returncode == 0, resumed.stderr
    assert (run_dir / "results.jsonl").read_bytes().startswith(kept)
    assert (run_dir / "report.json").is_file()


def test_read_only_store(tmp_path: Path, small_fs: Path) -> None:
    project = init_demo(tmp_path / "p")
    _remount(small_fs, "size=20m")
    out = str(small_fs / "out")
    assert km_process("eval", "--report-only", "--output-dir", out, cwd=project).returncode == 0
    _remount(small_fs, "ro")
    for args in (["report", "latest"], ["eval", "--resume", "latest"], ["eval"]):
        r = km_process(*args, "--output-dir", out, cwd=project)
        assert r.returncode == 2, (args, r.stderr)
        _one_line(r.stderr, "read-only", "make it writable")
    for args in (["runs"], ["gaps", "latest"]):  # reading commands still work
        r = km_process(*args, "--output-dir", out, cwd=project)
        assert r.returncode == 0, (args, r.stderr)
