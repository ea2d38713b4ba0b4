"""Helpers for the grading tests: scripted judges, results with traces, a sync ``grade``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from knowmeter.executors import ExecRequest, ExecResult, Executor
from knowmeter.grading import Assertion, Grade, GradingConfig, JudgeSpec, grade, load_assertions
from knowmeter.samples import Sample
from knowmeter.traces import MessageEvent, ToolCallEvent, ToolResultEvent, ToolStatus, Trace

#: One tool call of a test trace: (tool, input, output, status).
ToolCall = tuple[str, dict[str, Any], str, ToolStatus]


def reply(score: Any, reason: str = "because", reasoning: str = "thinking") -> str:
    return json.dumps({"reasoning": reasoning, "score": score, "reason": reason})


class ScriptedJudge(Executor):
    """A judge executor answering from a list of replies (cycling) or a function of the request.
    A reply that is an Exception instance is raised; ``cost`` is reported per call."""

    name = "scripted-judge"
    non_llm = True

    def __init__(
        self, replies: Sequence[str | Exception] | Callable[[ExecRequest], str], cost: float | None = 0.01
    ) -> None:
        self.replies = replies
        self.cost = cost
        self.requests: list[ExecRequest] = []

    def identity(self) -> str:
        return "scripted-judge"

    async def run(self, request: ExecRequest) -> ExecResult:
        self.requests.append(request)
        if callable(self.replies):
            answer: str | Exception = self.replies(request)
        else:
            answer = self.replies[(len(self.requests) - 1) % len(self.replies)]
        if isinstance(answer, Exception):
            raise answer
        return ExecResult(output=answer, trace=Trace(), cost_usd=self.cost)


def judge(
    replies: Sequence[str | Exception] | Callable[[ExecRequest], str],
    name: str = "scripted:m",
    cost: float | None = 0.01,
) -> JudgeSpec:
    return JudgeSpec(name, ScriptedJudge(replies, cost), "m")


def asked(spec: JudgeSpec) -> list[ExecRequest]:
    """The requests a judge made by ``judge(...)`` has received so far."""
    assert isinstance(spec.executor, ScriptedJudge)
    return spec.executor.requests


def make_result(
    output: str = "",
    *,
    tools: Sequence[ToolCall] = (),
    source_names: Sequence[str | None] | None = None,
    cost: float | None = None,
    latency: float | None = None,
    turns: int | None = None,
    error: str | None = None,
) -> ExecResult:
    """A result whose trace holds one tool call per ``(tool, input, output, status)``."""
    events: list[Any] = [MessageEvent("user", "task", turn=0)]
    for i, (tool, tool_input, tool_output, status) in enumerate(tools):
        source = source_names[i] if source_names else None
        events.append(ToolCallEvent(f"c{i}", tool, tool_input, turn=i + 1, source_tool=source or tool))
        events.append(ToolResultEvent(f"c{i}", tool_output, status, turn=i + 1))
    events.append(MessageEvent("assistant", output, turn=len(tools) + 1))
    return ExecResult(
        output=output,
        trace=Trace(events=events, source="test"),
        cost_usd=cost,
        latency_ms=latency,
        num_turns=turns,
        error=error,
    )


def sample(**fields: Any) -> Sample:
    fields.setdefault("sample_id", "s1")
    fields.setdefault("prompt", "Explain the bug.")
    return Sample.from_record(fields)


def load(raw: list[dict[str, Any]], base_dir: Path | None = None) -> list[Assertion]:
    return load_assertions(raw, "test.yaml: sample 's1'", base_dir or Path.cwd())


def run(
    s: Sample,
    result: ExecResult,
    assertions: Sequence[Assertion] = (),
    judges: Sequence[JudgeSpec] = (),
    config: GradingConfig | None = None,
) -> Grade:
    async def go() -> Grade:
        return await grade(
            s, result, assertions=list(assertions), judges=list(judges), config=config or GradingConfig()
        )

    return anyio.run(go)


def check(raw: dict[str, Any], output: str = "", **result_fields: Any) -> bool | None:
    """Grade one assertion against ``output``; its ``passed``."""
    g = run(sample(), make_result(output, **result_fields), load([raw]))
    return g.assertions[0].passed
