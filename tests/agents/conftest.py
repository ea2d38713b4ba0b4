"""Fixtures for the agent executor tests: the scripted model server, the pinned CLIs
(``npm ci --prefix tests/agents``), a seeded workspace and a skill folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knowmeter.executors import SkillInstall
from tests.support.agents import agent_cli
from tests.support.mock_model import MockModelServer, ServerFactory

#: A phrase that occurs only in the test skill: finding it in a request means the skill leaked in.
SKILL_MARKER = "PLUMTREE-7731"
SKILL_NAME = "fruit-finder"


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned claude CLI (fails under CI=true when missing, skips otherwise)."""
    return agent_cli("claude")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The pinned codex CLI (fails under CI=true when missing, skips otherwise)."""
    return agent_cli("codex")


@pytest.fixture
def mock_server(tmp_path: Path) -> Iterator[ServerFactory]:
    """A factory: ``mock_server(scenarios)`` starts a MockModelServer logging to
    ``tmp_path/requests.jsonl``; every server is stopped after the test."""
    servers: list[MockModelServer] = []

    def make(scenarios: Any = None, **kwargs: Any) -> MockModelServer:
        kwargs.setdefault("log_path", tmp_path / f"requests{len(servers) or ''}.jsonl")
        server = MockModelServer(scenarios, **kwargs).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small folder for the agent to search: ``fruits.txt`` (banana on line 2) and ``notes.md``."""
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "fruits.txt").write_text("apple\nbanana split\ncherry\n")
    (ws / "notes.md").write_text("# notes\nnothing here\n")
    return ws


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    """A directory skill with a reference file; its description and body carry SKILL_MARKER."""
    root = tmp_path / "skills" / SKILL_NAME
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text(
        f"---\nname: {SKILL_NAME}\ndescription: Find fruit words in text files ({SKILL_MARKER}).\n---\n\n"
        f"# Fruit finder\n\nSearch with Grep for the fruit name; see references/fruits.md. {SKILL_MARKER}\n"
    )
    (root / "references" / "fruits.md").write_text("banana, kiwi, apple\n")
    return root


@pytest.fixture
def skill_marker() -> str:
    """The phrase that occurs only in the test skill."""
    return SKILL_MARKER


@pytest.fixture
def skill(skill_dir: Path) -> SkillInstall:
    """The test skill as the runner hands it to an executor."""
    return SkillInstall(SKILL_NAME, skill_dir, (skill_dir / "SKILL.md").read_text())
