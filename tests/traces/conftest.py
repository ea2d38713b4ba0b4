"""Fixtures for the trace-adapter tests: where the real reference traces and CLI captures are."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def ref_traces(shared_dir: Path) -> Path:
    """``shared/reference/traces`` (real public traces, see PROVENANCE.md there)."""
    return shared_dir / "reference" / "traces"


@pytest.fixture(scope="session")
def captures(shared_dir: Path) -> Path:
    """``shared/reference/agent-clis/captures`` (real claude / codex outputs against a scripted model)."""
    return shared_dir / "reference" / "agent-clis" / "captures"
