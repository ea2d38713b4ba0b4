"""The real Skill Graph skills (``shared/reference/skill-graph/skills``) for activation tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def sg_skills(shared_dir: Path) -> Path:
    """The folder holding the real a11y, debugging, documentation and type-safety skills."""
    return shared_dir / "reference" / "skill-graph" / "skills"
