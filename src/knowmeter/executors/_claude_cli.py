"""The ``claude`` executor: the Claude Code CLI in print mode, one isolated run per task.

Command (prompt on stdin, so its size and a leading ``-`` do not matter)::

    claude -p --output-format stream-json --verbose --setting-sources "" --strict-mcp-config
           --mcp-config '{"mcpServers":{}}' --no-session-persistence --permission-mode default
           --tools Read,Grep,Glob,Bash,Skill --allowedTools Read Grep Glob Bash Skill
           [--model M] [--max-budget-usd X] [--append-system-prompt-file ARTIFACT]  < prompt

Delivery of the artifact (option ``delivery``):

- ``system`` (default): appended to Claude Code's own system prompt
  (``--append-system-prompt-file``), so both arms share the default prompt and differ only by the
  artifact. ``system_prompt: replace`` uses ``--system-prompt-file`` instead, with
  ``base_system_prompt`` (default empty) for the baseline and before the artifact.
- ``skill``: installed as ``.claude/skills/<name>/`` (the whole skill folder) in the task's
  workspace copy. Claude Code 2.1.197 loads project skills only with the ``project`` setting
  source, so this delivery defaults to ``--setting-sources project`` in *both* arms.

Grep and Glob are hidden in the native builds unless named, hence the explicit tool list.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import Field, field_validator

from knowmeter.executors._api_errors import ApiFailure, api_failure, claude_api_retries
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
from knowmeter.traces import parse_claude_stream, usage_from

INSTALL_HINT = "install it with: npm install -g @anthropic-ai/claude-code@2.1.197 (or set option bin)"
DEFAULT_TOOLS = ("Read", "Grep", "Glob", "Bash", "Skill")
#: Variables passed through from knowmeter's environment (provider and credentials).
CLAUDE_PASS_ENV = (
    "ANTHROPIC_*",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "AWS_*",
    "CLOUD_ML_REGION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "VERTEX_REGION_*",
)
#: Set on every run: no traffic but model traffic (measured: the first alone is enough).
CLAUDE_OFFLINE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
}
#: The memory files Claude Code loads from the workspace (with the ``project`` setting source).
MEMORY_FILES = ("CLAUDE.md", ".claude/CLAUDE.md")
EMPTY_MCP = '{"mcpServers":{}}'


def _tool_list(value: Any) -> Any:
    if isinstance(value, str) and value != "default":
        return [t.strip() for t in value.split(",") if t.strip()]
    return value


class ClaudeOptions(CliOptions):
    """Options of the ``claude`` executor (``executor: {name: claude, options: {...}}``)."""

    delivery: Literal["system", "skill"] = "system"
    system_prompt: Literal["append", "replace"] = "append"
    base_system_prompt: str = ""
    #: available tools (``--tools``); ``default`` = Claude Code's full set
    tools: list[str] | Literal["default"] = Field(default_factory=lambda: list(DEFAULT_TOOLS))
    #: tools allowed without asking (``--allowedTools``); default: the ``tools`` list
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] = Field(default_factory=list)
    permission_mode: Literal["default", "acceptEdits", "auto", "bypassPermissions", "dontAsk", "plan"] = "default"
    #: ``--setting-sources``; default: "" (none) for system delivery, "user" (the task's private
    #: config dir, where the skill is installed) for skill delivery
    setting_sources: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    max_budget_usd: float | None = Field(default=None, gt=0)
    #: how often Claude Code itself retries a failed API request (``CLAUDE_CODE_MAX_RETRIES``; its
    #: own default is 10, minutes of back-off); knowmeter's ``--retry`` applies after these
    max_retries: int = Field(default=2, ge=0)

    _split_tools = field_validator("tools", "allowed_tools", "disallowed_tools", mode="before")(_tool_list)


class ClaudeCliExecutor(CliAgentExecutor[ClaudeOptions]):
    """Claude Code (``claude -p --output-format stream-json``) as the agent under test."""

    name = "claude"
    default_pass_env = CLAUDE_PASS_ENV

    def base_env(self) -> dict[str, str]:
        env = {**CLAUDE_OFFLINE_ENV, "CLAUDE_CODE_MAX_RETRIES": str(self.options.max_retries)}
        if self.options.base_url:
            env["ANTHROPIC_BASE_URL"] = self.options.base_url
        if self.options.api_key:
            env["ANTHROPIC_API_KEY"] = self.options.api_key
        if self.options.permission_mode == "bypassPermissions" and os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"  # Claude Code refuses bypassPermissions as root without it
        return env

    def cli_api_urls(self) -> dict[str, str]:
        """Option ``base_url``, else Anthropic's API."""
        if self.options.base_url:
            return {"option base_url": self.options.base_url}
        return {"claude's default API": "https://api.anthropic.com"}

    def setting_sources(self) -> str:
        """``--setting-sources``: the option, else none ("") — "user" for skill delivery."""
        o = self.options
        if o.setting_sources is not None:
            return o.setting_sources
        return "user" if o.delivery == "skill" else ""

    def allowed_tools(self) -> list[str]:
        """``--allowedTools``: the option, else the ``tools`` list (the defaults for ``tools: default``)."""
        o = self.options
        if o.allowed_tools is not None:
            return o.allowed_tools
        return list(DEFAULT_TOOLS) if o.tools == "default" else o.tools

    def budget_usd(self, request: ExecRequest) -> float | None:
        """``--max-budget-usd``: the smaller of the option and the task's cost cap."""
        budgets = [b for b in (self.options.max_budget_usd, request.max_cost_usd) if b]
        return min(budgets) if budgets else None

    def skills_dir(self, sandbox: TaskSandbox) -> Path:
        """Where a ``skill`` delivery installs the artifact: the task's private user skills
        (``$CLAUDE_CONFIG_DIR/skills``), loaded by the ``user`` setting source, which reads no
        CLAUDE.md and no settings from the workspace or the folders above it."""
        return sandbox.claude_config_dir / "skills"

    async def install_artifact(self, request: ExecRequest, sandbox: TaskSandbox) -> list[str]:
        """Deliver the artifact: install the skill, or write the system prompt file and return the
        flag that passes it (``--append-system-prompt-file`` / ``--system-prompt-file``)."""
        o = self.options
        text = artifact_text(request)
        if o.delivery == "skill":
            skill, skills_dir = artifact_skill(request), self.skills_dir(sandbox)
            if skill is not None or request.extra_skills:
                await anyio.to_thread.run_sync(lambda: install_skills(skills_dir, skill, request.extra_skills))
            return []
        if o.system_prompt == "append":
            if text is None:
                return []
            return ["--append-system-prompt-file", str(await write_text(sandbox.root / "system.md", text))]
        system = "\n\n".join(p for p in (o.base_system_prompt, text) if p)
        return ["--system-prompt-file", str(await write_text(sandbox.root / "system.md", system))]

    def delivered(self, request: ExecRequest, sandbox: TaskSandbox) -> dict[str, Any]:
        """The artifact as system prompt or skill; CLAUDE.md files only with the ``project``
        setting source (which also reads the folders above the workspace: the seal hides them)."""
        skill = artifact_skill(request)
        as_skill = self.options.delivery == "skill"
        memory = MEMORY_FILES if "project" in self.setting_sources().split(",") else ()
        return delivery_meta(
            sandbox,
            artifact=None if skill is None else "skill" if as_skill else "system_prompt",
            memory=memory,
            skill_dir=self.skills_dir(sandbox) / skill_folder_name(skill) if skill and as_skill else None,
        )

    def _flags(self, request: ExecRequest) -> list[str]:
        o = self.options
        flags = [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--setting-sources",
            self.setting_sources(),
            "--strict-mcp-config",
            "--mcp-config",
            EMPTY_MCP,
            "--no-session-persistence",
            "--permission-mode",
            o.permission_mode,
        ]
        if o.tools != "default":
            flags += ["--tools", ",".join(o.tools)]
        if allowed := self.allowed_tools():
            flags += ["--allowedTools", *allowed]
        if o.disallowed_tools:
            flags += ["--disallowedTools", *o.disallowed_tools]
        if model := request.model or self.model:
            flags += ["--model", model]
        if budget := self.budget_usd(request):
            flags += ["--max-budget-usd", f"{budget:g}"]
        return flags

    async def prepare(self, request: ExecRequest, sandbox: TaskSandbox) -> tuple[list[str], Path | None]:
        argv = [
            str(self.binary),
            *self._flags(request),
            *await self.install_artifact(request, sandbox),
            *self.options.extra_args,
        ]
        return argv, await write_text(sandbox.root / "prompt.txt", request.prompt)

    def stream_result(self, records: Iterable[str | Mapping[str, Any]], error: str | None = None) -> ExecResult:
        """An ExecResult from Claude stream-json records (lines or the SDK's message dicts);
        ``error`` is a process-level error used when the stream reports none."""
        records = list(records)
        trace, summary = parse_claude_stream(records)
        retries, _, _ = claude_api_retries(records)
        failure = api_failure(summary.api_error_status, retries=retries, detail=summary.error or "")
        if failure is not None:
            raise_if_retryable(self.name, failure)
            error = failure.message(self.name)
        trace.meta.update(executor=self.name, delivery=self.options.delivery)
        return ExecResult(
            output=summary.output,
            trace=trace,
            usage=usage_from(summary.usage),
            cost_usd=summary.cost_usd,
            duration_api_ms=summary.duration_api_ms,
            num_turns=summary.num_turns,
            error=error if failure is not None else summary.error or error,
        )

    def pending_api_failure(self, outcome: ProcessOutcome) -> ApiFailure | None:
        """The API error Claude Code was still retrying when it was stopped (its ``api_retry`` events)."""
        retries, status, error = claude_api_retries(outcome.stdout.decode("utf-8", "replace").splitlines())
        return api_failure(status, retries=retries, detail=error)

    async def interpret(self, request: ExecRequest, sandbox: TaskSandbox, outcome: ProcessOutcome) -> ExecResult:
        lines = outcome.stdout.decode("utf-8", "replace").splitlines()
        return self.stream_result(lines, process_error(self.name, outcome, None))


@register_executor("claude")
def _make_claude(spec: ExecutorSpec) -> ClaudeCliExecutor:
    options = parse_options(ClaudeOptions, "claude", spec.options)
    binary = find_binary("claude", options.bin, INSTALL_HINT)
    return ClaudeCliExecutor(binary, options, spec.model, sealed=sealing("claude", spec, options))
