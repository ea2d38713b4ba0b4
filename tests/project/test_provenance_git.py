"""run.json's ``git`` block (``_provenance.git_state``) read from real repositories, with one
``git`` process a run (start-up CPU and wall time, issue 32)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from knowmeter import _provenance


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.com")
    _git(tmp_path, "config", "user.name", "t")
    return tmp_path


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The commands ``git_state`` runs (each still runs)."""
    calls: list[list[str]] = []
    real = subprocess.run

    def run(args: list[str], **kwargs: Any) -> Any:
        calls.append(args)
        return real(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    return calls


def test_outside_git_and_before_the_first_commit_nothing_is_known(
    tmp_path: Path, repo: Path, spawned: list[list[str]]
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-plain"
    outside.mkdir()
    assert _provenance.git_state(outside) == {"commit": None, "dirty": None}
    assert _provenance.git_state(repo) == {"commit": None, "dirty": None}
    assert len(spawned) == 2  # one git process each


def test_a_commit_is_read_with_its_dirty_flag_from_one_git_process(repo: Path, spawned: list[list[str]]) -> None:
    (repo / "a.md").write_text("one\n")
    _git(repo, "add", "a.md")
    _git(repo, "commit", "-qm", "first")
    head = _git(repo, "rev-parse", "HEAD")
    (repo / "notes.txt").write_text("untracked files do not make a checkout dirty\n")
    spawned.clear()
    assert _provenance.git_state(repo / ".") == {"commit": head, "dirty": False}
    assert len(spawned) == 1
    (repo / "a.md").write_text("two\n")
    assert _provenance.git_state(repo) == {"commit": head, "dirty": True}
    _git(repo, "checkout", "-q", "--detach")
    _git(repo, "checkout", "-q", "a.md")
    assert _provenance.git_state(repo) == {"commit": head, "dirty": False}
