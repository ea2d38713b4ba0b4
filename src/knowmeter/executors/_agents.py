"""Registers the executors of real agents: the ``claude`` and ``codex`` CLIs, the ``openai`` and
``anthropic`` SDKs and ``claude-sdk`` (claude-agent-sdk). Importing this module registers them;
each imports its SDK only when it is built or run."""

from __future__ import annotations

from knowmeter.executors import _anthropic_api, _claude_cli, _claude_sdk, _codex_cli, _openai_api

__all__ = ["_anthropic_api", "_claude_cli", "_claude_sdk", "_codex_cli", "_openai_api"]
