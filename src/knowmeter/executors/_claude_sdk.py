"""The ``claude-sdk`` executor: Claude Code driven through the ``claude-agent-sdk`` Python package
(optional extra ``knowmeter[claude]``).

It takes the same options as ``claude`` and isolates the same way: a private workspace copy and
HOME, the artifact appended to the default system prompt or installed as a project skill, no MCP
servers, no setting sources but the ones asked for. The SDK starts the CLI with the parent's
whole environment merged in, so knowmeter hands it a small wrapper (``cli_path``) that re-executes
the CLI under ``env -i`` with the task's minimal environment. The CLI is option ``bin``, else the
one bundled in the SDK's wheel, else ``claude`` on PATH. The SDK's messages are turned back into
stream-json records and parsed by the same adapter as the ``claude`` executor.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from knowmeter.errors import InputError
from knowmeter.executors._api_errors import api_failure, claude_api_retries
from knowmeter.executors._claude_cli import ClaudeCliExecutor, ClaudeOptions
from knowmeter.executors._cli_common import broken_tools, find_binary, raise_if_retryable, sealing, write_text
from knowmeter.executors._isolation import TaskSandbox
from knowmeter.executors._model_api import import_sdk
from knowmeter.executors._options import parse_options
from knowmeter.executors._protocol import ExecRequest, ExecResult, ExecutorError
from knowmeter.executors._registry import ExecutorSpec, register_executor

INSTALL_HINT = "install it with: pip install 'knowmeter[claude]'"
CLI_HINT = "set option bin, or install the CLI: npm install -g @anthropic-ai/claude-code@2.1.197"
#: Variables the SDK sets for the CLI that the ``env -i`` wrapper passes on.
SDK_ENV = ("CLAUDE_CODE_ENTRYPOINT", "CLAUDE_AGENT_SDK_VERSION")
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _block_record(block: Any) -> dict[str, Any]:
    """A content block (``ToolUseBlock`` …) as its API dict (``{"type": "tool_use", …}``)."""
    if isinstance(block, Mapping):
        return dict(block)
    is_instance = dataclasses.is_dataclass(block) and not isinstance(block, type)
    record = dataclasses.asdict(block) if is_instance else dict(vars(block))
    record.setdefault("type", _CAMEL.sub("_", type(block).__name__.removesuffix("Block")).lower())
    return record


def sdk_record(sdk: ModuleType, message: Any) -> dict[str, Any] | None:
    """One SDK message as the stream-json record the CLI printed (None for stream/rate events)."""
    if isinstance(message, sdk.AssistantMessage):
        return {
            "type": "assistant",
            "parent_tool_use_id": message.parent_tool_use_id,
            "message": {
                "id": message.message_id,
                "model": message.model,
                "role": "assistant",
                "content": [_block_record(b) for b in message.content],
                "usage": message.usage,
                "stop_reason": message.stop_reason,
            },
        }
    if isinstance(message, sdk.UserMessage):
        content = message.content if isinstance(message.content, str) else [_block_record(b) for b in message.content]
        return {
            "type": "user",
            "parent_tool_use_id": message.parent_tool_use_id,
            "tool_use_result": message.tool_use_result,
            "message": {"role": "user", "content": content},
        }
    if isinstance(message, sdk.SystemMessage):
        return {**message.data, "type": "system", "subtype": message.subtype}
    if isinstance(message, sdk.ResultMessage):
        return {**dataclasses.asdict(message), "type": "result"}
    return None


def flag_dict(args: list[str]) -> dict[str, str | None]:
    """``["--a", "1", "--b", "--c=2"]`` → ``{"a": "1", "b": None, "c": "2"}`` (the SDK's extra_args)."""
    flags: dict[str, str | None] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--"):
            raise InputError(
                f"executor 'claude-sdk': option extra_args: {arg!r} is not a --flag; give flags as --name [value]"
            )
        name, eq, value = arg[2:].partition("=")
        if eq:
            flags[name] = value
        elif i + 1 < len(args) and not args[i + 1].startswith("--"):
            flags[name] = args[i + 1]
            i += 1
        else:
            flags[name] = None
        i += 1
    return flags


def wrapper_script(command: list[str], env: Mapping[str, str]) -> str:
    """A sh script that runs ``command`` (the CLI, sealed or not) with exactly ``env`` (plus the
    SDK's own variables)."""
    assigns = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()))
    forwarded = " ".join(f'"{k}=${{{k}:-}}"' for k in SDK_ENV)
    return f'#!/bin/sh\nexec /usr/bin/env -i {assigns} {forwarded} {shlex.join(command)} "$@"\n'


class ClaudeSdkExecutor(ClaudeCliExecutor):
    """Claude Code through ``claude_agent_sdk.query``, one isolated run per task."""

    name = "claude-sdk"

    def __init__(
        self, binary: Path, options: ClaudeOptions, model: str | None, sdk_version: str, *, sealed: bool = True
    ) -> None:
        super().__init__(binary, options, model, sealed=sealed)
        self.sdk_version = sdk_version

    def identity(self) -> str:
        return f"{self.name}:{self.sdk_version}:{super().identity().split(':', 1)[1]}"

    async def _agent_options(self, sdk: ModuleType, request: ExecRequest, sandbox: TaskSandbox) -> Any:
        o = self.options
        command = sandbox.command([str(self.binary)])
        wrapper = await write_text(sandbox.root / "claude-isolated", wrapper_script(command, sandbox.env))
        wrapper.chmod(0o700)
        extra = {
            **flag_dict(await self.install_artifact(request, sandbox)),
            "no-session-persistence": None,
            **flag_dict(o.extra_args),
        }
        return sdk.ClaudeAgentOptions(
            cwd=str(sandbox.workspace),
            cli_path=str(wrapper),
            system_prompt={"type": "preset", "preset": "claude_code"},
            tools=None if o.tools == "default" else list(o.tools),
            allowed_tools=self.allowed_tools(),
            disallowed_tools=list(o.disallowed_tools),
            permission_mode=o.permission_mode,
            model=request.model or self.model,
            max_budget_usd=self.budget_usd(request),
            setting_sources=[s for s in self.setting_sources().split(",") if s],
            strict_mcp_config=True,
            extra_args=extra,
        )

    async def run(self, request: ExecRequest) -> ExecResult:
        sdk = import_sdk("claude_agent_sdk", INSTALL_HINT)
        timeout = self.timeout_for(request)
        started = time.perf_counter()
        records: list[dict[str, Any]] = []
        error: str | None = None
        async with self.sandbox(request) as sandbox:
            delivered = self.delivered(request, sandbox)
            messages = sdk.query(prompt=request.prompt, options=await self._agent_options(sdk, request, sandbox))
            try:
                with anyio.move_on_after(timeout) as scope:
                    async for message in messages:
                        if (record := sdk_record(sdk, message)) is not None:
                            records.append(record)
            except sdk.ClaudeSDKError as exc:
                error = f"{self.name}: {type(exc).__name__}: {exc}"
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                    await messages.aclose()
        if error is not None and not records:
            raise ExecutorError(error)  # the CLI never started or died at once: worth a retry
        result = self.stream_result(records, error)
        result.trace.meta.update(delivered, sealed=self.sealed)
        result.latency_ms = (time.perf_counter() - started) * 1000
        if scope.cancelled_caught:
            retries, status, word = claude_api_retries(records)
            failure, note = (
                api_failure(status, retries=retries, detail=word),
                f" (still retrying at the {timeout:g}s timeout)",
            )
            if failure is not None:
                raise_if_retryable(self.name, failure, note)
            result.error = failure.message(self.name) + note if failure else f"{self.name} timed out after {timeout:g}s"
            result.timed_out = True
        elif result.error is None:
            result.error = broken_tools(self.name, result.trace)
        return result


def _sdk_cli(sdk: ModuleType, configured: str | None) -> Path:
    if configured:
        return find_binary("claude", configured, CLI_HINT)
    bundled = Path(sdk.__file__ or "").parent / "_bundled" / "claude"
    return bundled if bundled.is_file() else find_binary("claude", None, CLI_HINT)


@register_executor("claude-sdk")
def _make_claude_sdk(spec: ExecutorSpec) -> ClaudeSdkExecutor:
    options = parse_options(ClaudeOptions, "claude-sdk", spec.options)
    flag_dict(options.extra_args)
    sdk = import_sdk("claude_agent_sdk", INSTALL_HINT)
    return ClaudeSdkExecutor(
        _sdk_cli(sdk, options.bin),
        options,
        spec.model,
        str(getattr(sdk, "__version__", "?")),
        sealed=sealing("claude-sdk", spec, options),
    )
