"""Claude Agent SDK messages logged with ``str()`` instead of JSON (a real failure mode:
FORMATS.md §1, 6 of the corpus's 156 logs): ``AssistantMessage(content=[ToolUseBlock(id=…,
name='Bash', input={…})], model=…)``, one message a line.

Each line is read as a Python expression with ``ast`` — never evaluated: only calls of the SDK's
message and block classes with literal arguments are accepted — and turned into the stream-json
record it stands for, which the Claude stream-json parser then reads. A line that is not such an
expression is kept as text, so the parser counts it as a damaged line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

from knowmeter.traces._claude_stream import parse_claude_stream
from knowmeter.traces._common import RunSummary
from knowmeter.traces._ir import Trace

__all__ = ["SOURCE", "parse_claude_repr", "repr_record"]

SOURCE = "claude-sdk-repr"

#: The longest line read (a repr line is one message; longer ones are counted as damaged).
_MAX_LINE = 4_000_000
_BLOCK_TYPES = {
    "TextBlock": "text",
    "ThinkingBlock": "thinking",
    "ToolUseBlock": "tool_use",
    "ToolResultBlock": "tool_result",
}


class _NotLiteral(ValueError):
    """The expression holds something other than literals and SDK class calls."""


def _value(node: ast.expr) -> Any:
    """A literal, list, dict, tuple or SDK-class call as plain data (``{"__class__": name, ...}``)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_value(k) if k is not None else None: _value(v) for k, v in zip(node.keys, node.values, strict=True)}
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
    ):
        return -node.operand.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        return {"__class__": node.func.id, **{kw.arg: _value(kw.value) for kw in node.keywords if kw.arg}}
    raise _NotLiteral(type(node).__name__)


def _block(item: Any) -> Any:
    if isinstance(item, Mapping) and item.get("__class__") in _BLOCK_TYPES:
        fields = {k: v for k, v in item.items() if k != "__class__"}
        if "content" in fields and isinstance(fields["content"], list):
            fields["content"] = [_block(c) for c in fields["content"]]
        return {"type": _BLOCK_TYPES[item["__class__"]], **fields}
    return item


def _content(value: Any) -> Any:
    return [_block(b) for b in value] if isinstance(value, list) else value


def repr_record(line: str) -> dict[str, Any] | None:
    """The stream-json record one repr line stands for (an SDK object that is no message: a
    record of type ``sdk:<class>``, which the parser passes over; None: not an SDK repr line)."""
    text = line.strip()
    if not text or len(text) > _MAX_LINE:
        return None
    try:
        obj = _value(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(obj, dict):
        return None
    kind = obj.pop("__class__", None)
    parent = obj.get("parent_tool_use_id")
    if kind == "SystemMessage":
        data = obj.get("data")
        return {**data, "type": "system"} if isinstance(data, dict) else {"type": "system", **obj}
    if kind == "AssistantMessage":
        message = {"role": "assistant", "model": obj.get("model"), "content": _content(obj.get("content"))}
        return {"type": "assistant", "message": message, "parent_tool_use_id": parent}
    if kind == "UserMessage":
        message = {"role": "user", "content": _content(obj.get("content"))}
        return {"type": "user", "message": message, "parent_tool_use_id": parent}
    if kind == "ResultMessage":
        return {"type": "result", **obj}
    return {"type": f"sdk:{kind}"} if isinstance(kind, str) else None  # another SDK object: passed over


def parse_claude_repr(lines: Iterable[str]) -> tuple[Trace, RunSummary]:
    """A trace from a log of SDK message reprs (blank lines between messages are skipped)."""

    def records() -> Iterable[str | Mapping[str, Any]]:
        for line in lines:
            if line.strip():
                record = repr_record(line)
                yield record if record is not None else line

    trace, summary = parse_claude_stream(records())
    trace.source = trace.meta["format"] = SOURCE
    return trace, summary
