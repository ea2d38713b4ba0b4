"""Fixtures for ``knowmeter observe``: the hand-written traces in ``fixtures/`` (real Claude Code
2.1.x session-JSONL and Codex rollout line shapes) and helpers to run over copies of them.

``fixtures/claude-projects/-home-u-proj/a111…`` — all three skill markers in one session:
``(no skill)`` prelude with an empty Grep → ``/review-pr`` (missing Read, failing Bash) →
``Skill(pdf)`` (its own SKILL.md re-read, a ``Task`` whose result reports ``agentId: a5b6c7d``,
subagent with an empty Glob, hedged prose) → Read of ``.claude/skills/deploy/SKILL.md`` (reads
``docs/kb/api.md``) → ``/clear`` (a UI command, not a skill).

``fixtures/claude-projects/-home-u-other/b222…`` — ``/pdf`` echoed then ``Skill(pdf)`` (one
invocation), three empty Greps (repeated failure), a ``Task`` without ``agentId`` (its subagent
found by prompt), an ``[unknown]`` marker, a second ``/pdf`` later, and a compaction transcript
(joined by time).

``fixtures/codex-sessions/…/rollout-…`` — Codex reading ``skills/.system/imagegen/SKILL.md`` with
``cat``, then an ``rg`` that finds nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    """A writable copy of the fixture traces (Claude projects + Codex sessions) under ``tmp/traces``."""
    root = tmp_path / "traces"
    shutil.copytree(FIXTURES / "claude-projects", root / "claude-projects")
    shutil.copytree(FIXTURES / "codex-sessions", root / "codex-sessions")
    return root


@pytest.fixture
def kb_dir() -> Path:
    return FIXTURES / "kb" / "docs" / "kb"
