"""Fixtures: the real Skill Graph type-safety files from shared/reference/skill-graph."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def skill_graph(shared_dir: Path) -> Path:
    return shared_dir / "reference" / "skill-graph"


@pytest.fixture(scope="session")
def type_safety_skill(skill_graph: Path) -> Path:
    return skill_graph / "skills" / "type-safety" / "SKILL.md"


@pytest.fixture(scope="session")
def type_safety_evals(skill_graph: Path) -> Path:
    return skill_graph / "evals" / "type-safety.json"
