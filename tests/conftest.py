"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``shared/`` folder that lies beside the repository (reference traces, specs)."""
    path = (REPO.parent / "shared").resolve()
    if not (path / "reference").is_dir():
        pytest.skip("shared/ reference material is not beside the repository")
    return path
