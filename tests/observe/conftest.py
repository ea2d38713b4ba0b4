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

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SESSION_A = "a1111111-1111-4111-8111-111111111111"
SESSION_B = "b2222222-2222-4222-8222-222222222222"


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


class SessionFile:
    """Writes a small Claude Code session JSONL file line by line, in the 2.1.x shapes."""

    def __init__(self, path: Path, cwd: str = "/home/u/proj") -> None:
        self.path, self.cwd = path, cwd
        self.lines: list[dict[str, Any]] = []
        self._n = 0

    def _rec(self, rtype: str, ts: str, **extra: Any) -> None:
        self._n += 1
        self.lines.append({"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                           "sessionId": self.path.stem, "version": "2.1.76", "type": rtype, **extra,
                           "uuid": f"u-{self.path.stem}-{self._n}", "timestamp": ts})

    def human(self, ts: str, text: str) -> SessionFile:
        self._rec("user", ts, message={"role": "user", "content": text})
        return self

    def call(self, ts: str, tool_id: str, name: str, inp: dict[str, Any]) -> SessionFile:
        self._n += 1
        self._rec("assistant", ts, requestId=f"req_{self._n}", message={
            "model": "claude-opus-4-6", "id": f"msg_{self.path.stem[:4]}{self._n}", "type": "message",
            "role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": inp}],
            "usage": {"input_tokens": 1, "output_tokens": 1}})
        return self

    def result(self, ts: str, tool_id: str, content: str, *, is_error: bool = False) -> SessionFile:
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        self._rec("user", ts, message={"role": "user", "content": [block]})
        return self

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.lines), encoding="utf-8")
        return self.path
