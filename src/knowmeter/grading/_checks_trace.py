"""Trace and run assertions (behavior layer): which tools the agent called, with what, how many
turns it took, what the run cost and how long it took.

Tool names match the IR's normalised name (``Bash``) or the agent's own name (``exec_command``),
case-insensitively, and may use shell wildcards (``mcp__github__*``). Tool inputs are searched in
their string values and in their JSON text. A cost, latency or turn count the executor did not
report fails the assertion with the reason ("cost unknown") — it never passes silently.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import Field, model_validator

from knowmeter.grading._checks_text import Count, Text, clip
from knowmeter.grading._registry import CheckContext, ListAssertion, Outcome, SyncAssertion, register
from knowmeter.grading._unicode import fold
from knowmeter.traces import ToolCallEvent, ToolInvocation

ToolName = Annotated[str, Field(min_length=1)]


def tool_matches(call: ToolCallEvent, pattern: str) -> bool:
    """Whether ``call`` is the tool ``pattern`` names (normalised or source name, any case, wildcards)."""
    pat = pattern.casefold()
    names = {call.tool.casefold(), (call.source_tool or call.tool).casefold()}
    return any(fnmatch.fnmatchcase(name, pat) for name in names)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


class _ToolList(ListAssertion):
    values: list[ToolName] = Field(min_length=1)

    def called(self, ctx: CheckContext) -> tuple[list[str], list[str]]:
        calls = ctx.result.trace.tool_calls()
        yes = [v for v in self.values if any(tool_matches(c, v) for c in calls)]
        return yes, [v for v in self.values if v not in yes]


@register("tools_called")
class ToolsCalled(_ToolList):
    def check(self, ctx: CheckContext) -> Outcome:
        _, missing = self.called(ctx)
        if missing:
            return Outcome(False, f"not called: {', '.join(missing)}", {"missing": missing})
        return Outcome(True, f"called: {', '.join(self.values)}")


@register("tools_not_called")
class ToolsNotCalled(_ToolList):
    def check(self, ctx: CheckContext) -> Outcome:
        called, _ = self.called(ctx)
        if called:
            return Outcome(False, f"called: {', '.join(called)}", {"called": called})
        return Outcome(True, f"none called of: {', '.join(self.values)}")


class _ToolCount(SyncAssertion):
    value: Count
    tool: ToolName | None = None

    def count(self, ctx: CheckContext) -> tuple[int, str]:
        calls = ctx.result.trace.tool_calls()
        if self.tool is not None:
            return sum(tool_matches(c, self.tool) for c in calls), f"{self.tool} calls"
        return len(calls), "tool calls"


@register("tools_count_min")
class ToolsCountMin(_ToolCount):
    def check(self, ctx: CheckContext) -> Outcome:
        n, what = self.count(ctx)
        return Outcome(n >= self.value, f"{n} {what} (needs >= {self.value})", {"actual": n})


@register("tools_count_max")
class ToolsCountMax(_ToolCount):
    def check(self, ctx: CheckContext) -> Outcome:
        n, what = self.count(ctx)
        return Outcome(n <= self.value, f"{n} {what} (needs <= {self.value})", {"actual": n})


class _ToolText(SyncAssertion):
    """``value`` is ``"Tool:text"`` (omk's form) unless ``tool`` names the tool."""

    value: Text = Field(min_length=1)
    tool: ToolName | None = None
    ignore_case: bool = False

    @model_validator(mode="after")
    def _has_tool(self) -> _ToolText:
        if self.tool is None and self.value.find(":") <= 0:
            raise ValueError("value must be 'Tool:text' (e.g. 'Bash:git status'), or give the tool in 'tool'")
        return self

    def target(self) -> tuple[str, str]:
        if self.tool is not None:
            return self.tool, self.value
        tool, _, text = self.value.partition(":")
        return tool, text

    def hits(self, ctx: CheckContext, on_output: bool) -> list[ToolInvocation]:
        tool, text = self.target()
        needle = fold(text, ignore_case=self.ignore_case)
        found = []
        for inv in ctx.result.trace.invocations():
            if not tool_matches(inv.call, tool):
                continue
            if on_output:
                haystacks = [inv.result.output] if inv.result is not None else []
            else:
                haystacks = [*_strings(inv.call.input), json.dumps(inv.call.input, ensure_ascii=False)]
            if any(needle in fold(h, ignore_case=self.ignore_case) for h in haystacks):
                found.append(inv)
        return found

    def describe(self) -> str:
        tool, text = self.target()
        return f"{tool} with {clip(text, 40)}"


@register("tool_input_contains")
class ToolInputContains(_ToolText):
    def check(self, ctx: CheckContext) -> Outcome:
        n = len(self.hits(ctx, on_output=False))
        return Outcome(n > 0, f"{n} call{'s' if n != 1 else ''} to {self.describe()} in the input")


@register("tool_input_not_contains")
class ToolInputNotContains(_ToolText):
    def check(self, ctx: CheckContext) -> Outcome:
        n = len(self.hits(ctx, on_output=False))
        return Outcome(n == 0, f"{n} call{'s' if n != 1 else ''} to {self.describe()} in the input")


@register("tool_output_contains")
class ToolOutputContains(_ToolText):
    def check(self, ctx: CheckContext) -> Outcome:
        n = len(self.hits(ctx, on_output=True))
        return Outcome(n > 0, f"{n} call{'s' if n != 1 else ''} to {self.describe()} in the output")


def _turns(ctx: CheckContext) -> int | None:
    if ctx.result.num_turns is not None:
        return ctx.result.num_turns
    return ctx.result.trace.turns if ctx.result.trace.events else None


class _Turns(SyncAssertion):
    value: Count


@register("turns_min")
class TurnsMin(_Turns):
    def check(self, ctx: CheckContext) -> Outcome:
        n = _turns(ctx)
        if n is None:
            return Outcome(False, "turns unknown: the executor reported no turns and no trace")
        return Outcome(n >= self.value, f"{n} turns (needs >= {self.value})", {"actual": n})


@register("turns_max")
class TurnsMax(_Turns):
    def check(self, ctx: CheckContext) -> Outcome:
        n = _turns(ctx)
        if n is None:
            return Outcome(False, "turns unknown: the executor reported no turns and no trace")
        return Outcome(n <= self.value, f"{n} turns (needs <= {self.value})", {"actual": n})


@register("cost_max")
class CostMax(SyncAssertion):
    """``value`` in USD."""

    value: float = Field(ge=0, allow_inf_nan=False)

    def check(self, ctx: CheckContext) -> Outcome:
        cost = ctx.result.cost_usd
        if cost is None:
            return Outcome(False, "cost unknown: the executor did not report a cost")
        return Outcome(cost <= self.value, f"cost ${cost:.4f} (needs <= ${self.value})", {"actual": cost})


@register("latency_max")
class LatencyMax(SyncAssertion):
    """``value`` in milliseconds."""

    value: float = Field(ge=0, allow_inf_nan=False)

    def check(self, ctx: CheckContext) -> Outcome:
        latency = ctx.result.latency_ms
        if latency is None:
            return Outcome(False, "latency unknown: the executor did not report it")
        return Outcome(
            latency <= self.value, f"latency {latency:.0f} ms (needs <= {self.value:.0f} ms)", {"actual": latency}
        )
