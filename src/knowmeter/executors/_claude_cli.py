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
from pathlib import Path
from typing import Any, ClassVar, Literal

import anyio
from pydantic import Field, field_validator

from knowmeter.executors._cli_common import (
    CliAgentExecutor,
    CliOptions,
    artifact_text,
    find_binary,
    process_error,
    write_text,
)
from knowmeter.executors._isolation import ProcessOutcome, TaskSandbox, install_skill
from knowmeter.executors._options import parse_options
from knowmeter.executors._protocol import ExecRequest, ExecResult, ExecutorError, SkillInstall, Usage
from knowmeter.executors._registry import ExecutorSpec, register_executor
from knowmeter.traces import parse_claude_stream

INSTALL_HINT = "install it with: npm install -g @anthropic-ai/claude-code@2.1.197 (or set option bin)"
DEFAULT_TOOLS = ("Read", "Grep", "Glob", "Bash", "Skill")
#: Variables passed through from knowmeter's environment (provider and credentials).
CLAUDE_PASS_ENV = ("ANTHROPIC_*", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
                   "CLAUDE_CODE_OAUTH_TOKEN", "AWS_*", "CLOUD_ML_REGION", "GOOGLE_APPLICATION_CREDENTIALS",
                   "VERTEX_REGION_*")
#: Set on every run: no traffic but model traffic (measured: the first alone is enough).
CLAUDE_OFFLINE_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
                      "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1"}
#: API statuses that Claude Code already retried and that are worth a later retry of the task.
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504, 529})
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
    permission_mode: Literal["default", "acceptEdits", "auto", "bypassPermissions", "dontAsk",
                             "plan"] = "default"
    #: ``--setting-sources``; default: "" (none) for system delivery, "project" for skill delivery
    setting_sources: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    max_budget_usd: float | None = Field(default=None, gt=0)

    _split_tools = field_validator("tools", "allowed_tools", "disallowed_tools", mode="before")(_tool_list)


class ClaudeCliExecutor(CliAgentExecutor[ClaudeOptions]):
    """Claude Code (``claude -p --output-format stream-json``) as the agent under test."""

    name = "claude"
    default_pass_env: ClassVar[tuple[str, ...]] = CLAUDE_PASS_ENV

    def base_env(self) -> dict[str, str]:
        env = dict(CLAUDE_OFFLINE_ENV)
        if self.options.base_url:
            env["ANTHROPIC_BASE_URL"] = self.options.base_url
        if self.options.api_key:
            env["ANTHROPIC_API_KEY"] = self.options.api_key
        if self.options.permission_mode == "bypassPermissions" and os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"  # Claude Code refuses bypassPermissions as root without it
        return env

    def _flags(self, request: ExecRequest) -> list[str]:
        o = self.options
        sources = o.setting_sources
        if sources is None:
            sources = "project" if o.delivery == "skill" else ""
        flags = ["-p", "--output-format", "stream-json", "--verbose", "--setting-sources", sources,
                 "--strict-mcp-config", "--mcp-config", EMPTY_MCP, "--no-session-persistence",
                 "--permission-mode", o.permission_mode]
        if o.tools != "default":
            flags += ["--tools", ",".join(o.tools)]
        allowed = o.allowed_tools if o.allowed_tools is not None else (
            list(DEFAULT_TOOLS) if o.tools == "default" else o.tools)
        if allowed:
            flags += ["--allowedTools", *allowed]
        if o.disallowed_tools:
            flags += ["--disallowedTools", *o.disallowed_tools]
        model = request.model or self.model
        if model:
            flags += ["--model", model]
        budgets = [b for b in (o.max_budget_usd, request.max_cost_usd) if b]
        if budgets:
            flags += ["--max-budget-usd", f"{min(budgets):g}"]
        return flags

    async def prepare(self, request: ExecRequest, sandbox: TaskSandbox) -> tuple[list[str], Path | None]:
        o = self.options
        argv = [str(self.binary), *self._flags(request)]
        text = artifact_text(request)
        if o.delivery == "skill":
            if text is not None:
                skill = request.skill or SkillInstall("artifact", None, text)
                skills_dir = sandbox.workspace / ".claude" / "skills"
                await anyio.to_thread.run_sync(lambda: install_skill(skills_dir, skill))
        elif o.system_prompt == "append":
            if text is not None:
                path = await write_text(sandbox.root / "system.md", text)
                argv += ["--append-system-prompt-file", str(path)]
        else:
            system = "\n\n".join(p for p in (o.base_system_prompt, text) if p)
            argv += ["--system-prompt-file", str(await write_text(sandbox.root / "system.md", system))]
        argv += o.extra_args
        return argv, await write_text(sandbox.root / "prompt.txt", request.prompt)

    async def interpret(self, request: ExecRequest, sandbox: TaskSandbox,
                        outcome: ProcessOutcome) -> ExecResult:
        trace, summary = parse_claude_stream(outcome.stdout.decode("utf-8", "replace").splitlines())
        if summary.api_error_status in RETRYABLE_STATUS:
            raise ExecutorError(f"claude: API error {summary.api_error_status}: {summary.error}")
        trace.meta.update(executor=self.name, delivery=self.options.delivery)
        return ExecResult(output=summary.output, trace=trace, usage=Usage.from_dict(summary.usage),
                          cost_usd=summary.cost_usd, duration_api_ms=summary.duration_api_ms,
                          num_turns=summary.num_turns, error=process_error(self.name, outcome, summary.error))


@register_executor("claude")
def _make_claude(spec: ExecutorSpec) -> ClaudeCliExecutor:
    options = parse_options(ClaudeOptions, "claude", spec.options)
    return ClaudeCliExecutor(find_binary("claude", options.bin, INSTALL_HINT), options, spec.model)
