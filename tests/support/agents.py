"""Point knowmeter's agent executors at a MockModelServer: the pinned CLIs and the executor options
an end-to-end test needs (also for ``eval.yaml`` files: ``executor: {name, model, options}``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.mock_model import MockModelServer

__all__ = ["AGENTS_DIR", "agent_cli", "executor_model", "executor_options"]

#: ``tests/agents``: ``npm ci --prefix tests/agents`` installs the pinned CLIs there.
AGENTS_DIR = Path(__file__).resolve().parents[1] / "agents"
#: A model slug each executor accepts against the mock (codex warns about slugs it does not know).
_MODELS = {"codex": "gpt-5.5", "openai": "gpt-4o", "anthropic": "claude-haiku-4-5"}


def agent_cli(name: str) -> Path:
    """The pinned ``claude`` / ``codex`` CLI. Missing: the test fails under ``CI=true``, else skips."""
    path = AGENTS_DIR / "node_modules" / ".bin" / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        message = f"{name} CLI not installed: run `npm ci --prefix tests/agents`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def executor_model(name: str) -> str | None:
    """A model for executor ``name`` (None: the CLI's default)."""
    return _MODELS.get(name)


def executor_options(name: str, server: MockModelServer, **extra: Any) -> dict[str, Any]:
    """Options that send executor ``name`` (claude, claude-sdk, codex, openai, anthropic) to
    ``server`` with a dummy key and no client retries; ``extra`` is merged in last."""
    options: dict[str, Any] = {"api_key": "dummy"}
    if name in ("claude", "claude-sdk"):
        options.update(bin=str(agent_cli("claude")), base_url=server.anthropic_base_url)
    elif name == "codex":
        options.update(bin=str(agent_cli("codex")), base_url=server.openai_base_url, max_retries=0)
    elif name == "openai":
        options.update(base_url=server.openai_base_url, max_retries=0)
    elif name == "anthropic":
        options.update(base_url=server.anthropic_base_url, max_retries=0)
    else:
        raise ValueError(f"no mock options for executor {name!r}")
    return {**options, **extra}
