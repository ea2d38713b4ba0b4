"""Builders for hand-made IR traces and a scripted executor (offline stand-in for an LLM)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from knowmeter.executors import ExecRequest, ExecResult, Executor
from knowmeter.samples import Watermark
from knowmeter.traces import ErrorKind, MessageEvent, ToolCallEvent, ToolResultEvent, ToolStatus, Trace


@dataclass
class TraceBuilder:
    """Appends IR events; ``tool`` adds a call and its result in one go."""

    meta: dict[str, Any] = field(default_factory=dict)
    events: list[Any] = field(default_factory=list)
    _n: int = 0

    def say(self, text: str, turn: int = 1, *, role: str = "assistant", injected: bool = False) -> TraceBuilder:
        self.events.append(MessageEvent(role=role, text=text, turn=turn, injected=injected))  # type: ignore[arg-type]
        return self

    def tool(
        self,
        tool: str,
        inp: dict[str, Any],
        output: str = "",
        *,
        turn: int = 1,
        status: ToolStatus = ToolStatus.SUCCESS,
        kind: ErrorKind | None = None,
        exit_code: int | None = None,
        agent_id: str | None = None,
        result: bool = True,
    ) -> TraceBuilder:
        self._n += 1
        cid = f"call_{self._n}"
        self.events.append(ToolCallEvent(id=cid, tool=tool, input=inp, turn=turn, agent_id=agent_id))
        if result:
            self.events.append(
                ToolResultEvent(
                    id=cid,
                    output=output,
                    status=status,
                    turn=turn,
                    exit_code=exit_code,
                    error_kind=kind,
                    agent_id=agent_id,
                )
            )
        return self

    def grep_empty(self, pattern: str, turn: int = 1) -> TraceBuilder:
        return self.tool("Grep", {"pattern": pattern}, "No matches found", turn=turn, kind=ErrorKind.EMPTY_SEARCH)

    def read_missing(self, path: str, turn: int = 1) -> TraceBuilder:
        return self.tool(
            "Read",
            {"file_path": path},
            "File does not exist.",
            turn=turn,
            status=ToolStatus.FAILURE,
            kind=ErrorKind.NOT_FOUND,
        )

    def read_ok(self, path: str, turn: int = 1) -> TraceBuilder:
        return self.tool("Read", {"file_path": path}, "1→content", turn=turn)

    def bash(
        self, command: str, output: str = "", *, exit_code: int = 0, turn: int = 1, kind: ErrorKind | None = None
    ) -> TraceBuilder:
        status = ToolStatus.SUCCESS if exit_code == 0 else ToolStatus.FAILURE
        if kind is None and exit_code not in (0, 127):
            kind = ErrorKind.NONZERO_EXIT
        if exit_code == 127:
            kind = ErrorKind.COMMAND_MISSING
        return self.tool("Bash", {"command": command}, output, turn=turn, status=status, kind=kind, exit_code=exit_code)

    def build(self) -> Trace:
        return Trace(events=list(self.events), source="test", meta=dict(self.meta))


@pytest.fixture
def tb() -> Callable[..., TraceBuilder]:
    return TraceBuilder


@pytest.fixture
def watermark() -> Watermark:
    return Watermark(("eval-samples.yaml",), 12, "1a2b3c4d" + "0" * 56)


class ScriptedExecutor(Executor):
    """An executor whose replies come from ``reply(request) -> str`` (or raise); records calls."""

    name = "scripted"
    non_llm = False

    def __init__(
        self, reply: Callable[[ExecRequest], str], *, cost: float | None = 0.001, error: str | None = None
    ) -> None:
        self.reply = reply
        self.cost = cost
        self.error = error
        self.requests: list[ExecRequest] = []

    def identity(self) -> str:
        return "scripted"

    async def run(self, request: ExecRequest) -> ExecResult:
        self.requests.append(request)
        text = self.reply(request)
        return ExecResult(output=text, trace=Trace(), cost_usd=self.cost, error=self.error)


@pytest.fixture
def scripted() -> type[ScriptedExecutor]:
    return ScriptedExecutor
