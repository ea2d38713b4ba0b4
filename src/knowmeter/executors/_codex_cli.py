"""The ``codex`` executor: the OpenAI Codex CLI (``codex exec --json``), one isolated run per task.

Command (prompt on stdin via ``-``, so its size does not matter and codex never waits on a pipe)::

    codex exec --json --skip-git-repo-check -C <workspace copy> --sandbox read-only
               -c analytics.enabled=false --disable plugins -c check_for_update_on_startup=false
               [-m MODEL] [-c model_provider=P -c 'model_providers.P={name=.., base_url=..,
               wire_api="responses", env_key=.., request_max_retries=N, stream_max_retries=N}'] -  < prompt

Delivery of the artifact (option ``delivery``), both measured on codex 0.169.0:

- ``agents_md`` (default): written to ``$CODEX_HOME/AGENTS.md`` of the task — codex's global
  instructions, sent in the same ``# AGENTS.md instructions`` message as the project's own
  AGENTS.md, which stays byte-identical in both arms. Unlike a project AGENTS.md it is not cut
  at ``project_doc_max_bytes`` (32 KiB).
- ``skill``: installed as ``.agents/skills/<name>/`` (the documented repository location; codex
  0.169 also reads ``.codex/skills`` and ``$CODEX_HOME/skills``) in the task's workspace copy.
  Codex refuses a SKILL.md without ``name``/``description`` frontmatter, so a minimal one is
  added when the text has none.

Usage comes from ``turn.completed``; codex reports no cost (None). The session rollout in the
task's CODEX_HOME is merged into the stream's trace so that commands the sandbox blocked (which
``exec --json`` never shows) are kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import Field

from knowmeter.executors._api_errors import api_failure, status_in_text
from knowmeter.executors._cli_common import (
    CliAgentExecutor,
    CliOptions,
    artifact_skill,
    artifact_text,
    delivery_meta,
    find_binary,
    process_error,
    raise_if_retryable,
    sealing,
    write_text,
)
from knowmeter.executors._isolation import ProcessOutcome, TaskSandbox, install_skills, skill_folder_name
from knowmeter.executors._options import parse_options
from knowmeter.executors._protocol import ExecRequest, ExecResult
from knowmeter.executors._registry import ExecutorSpec, register_executor
from knowmeter.traces import Trace, iter_codex_sessions, merge_codex, parse_codex_exec, usage_from

INSTALL_HINT = "install it with: npm install -g @openai/codex@0.169.0 (or set option bin)"
CODEX_PASS_ENV = ("OPENAI_*", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY")
#: The variable that carries ``api_key`` to a provider defined by ``base_url``.
API_KEY_VAR = "KNOWMETER_CODEX_API_KEY"
DEFAULT_PROVIDER = "knowmeter"


class CodexOptions(CliOptions):
    """Options of the ``codex`` executor (``executor: {name: codex, options: {...}}``)."""

    delivery: Literal["agents_md", "skill"] = "agents_md"
    sandbox: Literal["read-only", "workspace-write", "danger-full-access"] = "read-only"
    #: an OpenAI-compatible Responses endpoint (with ``/v1``); defines provider ``provider``
    base_url: str | None = None
    #: the provider: with ``base_url`` the name of the one defined, else a built-in one (openai, ollama, …)
    provider: str | None = None
    wire_api: str = "responses"
    #: the environment variable holding the provider's API key (passed through)
    env_key: str | None = None
    api_key: str | None = None
    #: ``request_max_retries`` and ``stream_max_retries`` of the provider defined by ``base_url``
    max_retries: int | None = Field(default=None, ge=0)


def _toml_table(values: dict[str, str | int]) -> str:
    """An inline TOML table (JSON string escapes are valid TOML basic strings)."""
    return "{" + ",".join(f"{k}={json.dumps(v)}" for k, v in values.items()) + "}"


class CodexCliExecutor(CliAgentExecutor[CodexOptions]):
    """Codex (``codex exec --json``) as the agent under test."""

    name = "codex"
    default_pass_env = CODEX_PASS_ENV

    def base_env(self) -> dict[str, str]:
        o = self.options
        if not o.api_key:
            return {}
        if o.base_url:
            return {o.env_key or API_KEY_VAR: o.api_key}
        return {"CODEX_API_KEY": o.api_key}

    def cli_api_urls(self) -> dict[str, str]:
        """Option ``base_url``, else OpenAI's API (another built-in provider: option ``seal_endpoints``)."""
        if self.options.base_url:
            return {"option base_url": self.options.base_url}
        return {"codex's default API": "https://api.openai.com"}

    def _provider_flags(self) -> list[str]:
        o = self.options
        if not o.base_url:
            return ["-c", f"model_provider={o.provider}"] if o.provider else []
        name = o.provider or DEFAULT_PROVIDER
        table: dict[str, str | int] = {"name": name, "base_url": o.base_url, "wire_api": o.wire_api}
        env_key = o.env_key or (API_KEY_VAR if o.api_key else None)
        if env_key:
            table["env_key"] = env_key
        if o.max_retries is not None:
            table["request_max_retries"] = table["stream_max_retries"] = o.max_retries
        return ["-c", f"model_provider={name}", "-c", f"model_providers.{name}={_toml_table(table)}"]

    async def prepare(self, request: ExecRequest, sandbox: TaskSandbox) -> tuple[list[str], Path | None]:
        o = self.options
        text = artifact_text(request)
        skill = artifact_skill(request)
        if o.delivery == "skill":
            skills_dir, extra = self.skills_dir(sandbox), request.extra_skills
            await anyio.to_thread.run_sync(lambda: install_skills(skills_dir, skill, extra, ensure_frontmatter=True))
        elif text is not None:
            await write_text(sandbox.codex_home / "AGENTS.md", text)
        argv = [
            str(self.binary),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-C",
            str(sandbox.workspace),
            "--sandbox",
            o.sandbox,
            "-c",
            "analytics.enabled=false",
            "--disable",
            "plugins",
            "-c",
            "check_for_update_on_startup=false",
        ]
        model = request.model or self.model
        if model:
            argv += ["-m", model]
        argv += [*self._provider_flags(), *o.extra_args, "-"]
        return argv, await write_text(sandbox.root / "prompt.txt", request.prompt)

    def skills_dir(self, sandbox: TaskSandbox) -> Path:
        """Where a ``skill`` delivery installs the artifact (the repository location codex reads)."""
        return sandbox.workspace / ".agents" / "skills"

    def delivered(self, request: ExecRequest, sandbox: TaskSandbox) -> dict[str, Any]:
        """The artifact as global AGENTS.md or skill; the workspace's AGENTS.md is always loaded."""
        skill = artifact_skill(request)
        as_skill = self.options.delivery == "skill"
        return delivery_meta(
            sandbox,
            artifact=None if skill is None else "skill" if as_skill else "agents_md",
            memory=("AGENTS.md",),
            skill_dir=self.skills_dir(sandbox) / skill_folder_name(skill) if skill and as_skill else None,
        )

    async def interpret(self, request: ExecRequest, sandbox: TaskSandbox, outcome: ProcessOutcome) -> ExecResult:
        trace, summary = parse_codex_exec(outcome.stdout.decode("utf-8", "replace").splitlines())
        rollouts: list[Trace] = await anyio.to_thread.run_sync(
            lambda: [s.main for s in iter_codex_sessions(sandbox.codex_home)]
        )
        if len(rollouts) == 1:
            trace = merge_codex(trace, rollouts[0])
        trace.meta.update(executor=self.name, delivery=self.options.delivery, rollouts=len(rollouts))
        error = process_error(self.name, outcome, summary.error)
        failure = api_failure(status_in_text(summary.error or ""), detail=summary.error or "")
        if failure is not None:
            raise_if_retryable(self.name, failure)
            error = failure.message(self.name)
        return ExecResult(
            output=summary.output,
            trace=trace,
            usage=usage_from(summary.usage),
            cost_usd=None,
            num_turns=trace.turns or summary.num_turns,
            error=error,
        )


@register_executor("codex")
def _make_codex(spec: ExecutorSpec) -> CodexCliExecutor:
    options = parse_options(CodexOptions, "codex", spec.options)
    binary = find_binary("codex", options.bin, INSTALL_HINT)
    return CodexCliExecutor(binary, options, spec.model, sealed=sealing("codex", spec, options))
