"""Print a real agent log as numbered units for hand labelling (stdlib only).

Independent of knowmeter on purpose: the labels of issue 28 are made blind,
so this reader shares no code with ``src/knowmeter``.  It prints, in log
order, every assistant text message (with the 0-based index the labels use),
every tool call (id, name, input) and its result (truncated), and a turn
number per assistant API message.

Usage: python bench/labels/dump_log.py FILE [--width N]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Unit:
    """One printable unit: an assistant text, a tool call or a tool result."""

    kind: str  # "text" | "call" | "result"
    turn: int
    ident: str | None = None
    name: str = ""
    body: Any = None
    is_error: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _repr_node(node: ast.AST) -> Any:
    """Turn a parsed SDK repr expression into plain Python data."""
    if isinstance(node, ast.Call):
        out: dict[str, Any] = {"_type": getattr(node.func, "id", "?")}
        for kw in node.keywords:
            out[str(kw.arg)] = _repr_node(kw.value)
        if node.args:
            out["_args"] = [_repr_node(a) for a in node.args]
        return out
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_repr_node(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _repr_node(k) if k is not None else "**": _repr_node(v) for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_repr_node(node.operand)
    return ast.unparse(node)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for b in content or []:
        if isinstance(b, dict):
            parts.append(str(b.get("text", b)))
    return "\n".join(parts)


def detect(first: str) -> str:
    """Name the format from the first non-empty line."""
    s = first.lstrip()
    if s.startswith("SystemMessage(") or s.startswith(("AssistantMessage(", "UserMessage(")):
        return "claude-sdk-repr"
    obj = json.loads(s)
    if obj.get("type") == "thread.started":
        return "codex-exec-json"
    if obj.get("type") == "system" and obj.get("subtype") == "init":
        return "claude-stream-json"
    return "claude-session-jsonl"


def _claude_units(records: list[dict[str, Any]]) -> Iterator[Unit]:
    turn = 0
    last_mid: object = None
    for rec in records:
        t = rec.get("type") or rec.get("_type")
        if t in ("assistant", "AssistantMessage"):
            msg = rec.get("message", rec)
            mid = msg.get("id") if isinstance(msg, dict) else None
            # A turn is one API response: one message.id (its blocks may be
            # interleaved with tool results).  Without ids (SDK repr) a turn
            # is a run of assistant messages not broken by a user message.
            if mid is None:
                if last_mid != "__repr_run__":
                    turn += 1
                last_mid = "__repr_run__"
            elif mid != last_mid:
                turn += 1
                last_mid = mid
            side = rec.get("parent_tool_use_id") or rec.get("isSidechain")
            for b in _blocks(msg.get("content")):
                bt = b.get("type") or b.get("_type")
                if bt in ("text", "TextBlock"):
                    yield Unit("text", turn, mid, body=b.get("text", ""), extra={"side": side})
                elif bt in ("tool_use", "ToolUseBlock"):
                    yield Unit("call", turn, b.get("id"), b.get("name", ""), b.get("input"))
                elif bt in ("thinking", "ThinkingBlock") and b.get("thinking"):
                    yield Unit("text", turn, mid, "thinking", b.get("thinking"))
        elif t in ("user", "UserMessage"):
            if last_mid == "__repr_run__":
                last_mid = None
            msg = rec.get("message", rec)
            content = msg.get("content") if isinstance(msg, dict) else None
            if isinstance(content, str):
                yield Unit("result", turn, None, "USER-PROMPT", content)
                continue
            for b in _blocks(content):
                bt = b.get("type") or b.get("_type")
                if bt in ("tool_result", "ToolResultBlock"):
                    yield Unit(
                        "result",
                        turn,
                        b.get("tool_use_id"),
                        body=_result_text(b.get("content")),
                        is_error=b.get("is_error"),
                    )
                elif bt in ("text", "TextBlock"):
                    yield Unit("result", turn, None, "USER-TEXT", b.get("text"))
        elif t in ("result", "ResultMessage"):
            yield Unit("result", turn, None, "FINAL-RESULT", rec.get("result"))


def _codex_units(records: list[dict[str, Any]]) -> Iterator[Unit]:
    turn = 0
    for rec in records:
        if rec.get("type") != "item.completed":
            continue
        item = rec["item"]
        turn += 1
        if item["type"] == "agent_message":
            yield Unit("text", turn, item["id"], body=item.get("text", ""))
        elif item["type"] == "command_execution":
            yield Unit("call", turn, item["id"], "command_execution", item.get("command"))
            yield Unit(
                "result",
                turn,
                item["id"],
                body=item.get("aggregated_output", ""),
                is_error=item.get("status") == "failed",
                extra={"exit": item.get("exit_code")},
            )
        else:
            yield Unit("call", turn, item["id"], item["type"], item)


def load(path: Path) -> tuple[str, list[Unit]]:
    """Read FILE and return its format name and its units in log order."""
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    fmt = detect(lines[0])
    records: list[dict[str, Any]] = []
    for ln in lines:
        try:
            if fmt == "claude-sdk-repr":
                records.append(_repr_node(ast.parse(ln.strip(), mode="eval").body))
            else:
                records.append(json.loads(ln))
        except (SyntaxError, ValueError) as exc:
            print(f"!! unparsable line: {exc}", file=sys.stderr)
    units = list(_codex_units(records) if fmt == "codex-exec-json" else _claude_units(records))
    return fmt, units


def main() -> None:
    """Print the units of one log."""
    ap = argparse.ArgumentParser()
    ap.add_argument("file", type=Path)
    ap.add_argument("--width", type=int, default=400)
    args = ap.parse_args()
    fmt, units = load(args.file)
    n_text = sum(1 for u in units if u.kind == "text" and u.name != "thinking")
    n_call = sum(1 for u in units if u.kind == "call")
    print(f"# {args.file.name} format={fmt} tool_calls={n_call} assistant_texts={n_text}")
    idx = 0
    w = args.width
    for u in units:
        if u.kind == "text":
            if u.name == "thinking":
                print(f"[T{u.turn}] THINKING: {u.body}")
                continue
            side = " SIDE" if u.extra.get("side") else ""
            print(f"[T{u.turn}] A#{idx} ({u.ident}){side}:\n{u.body}\n")
            idx += 1
        elif u.kind == "call":
            body = u.body if isinstance(u.body, str) else json.dumps(u.body, ensure_ascii=False)
            print(f"[T{u.turn}] CALL {u.ident} {u.name} {body[: w * 2]}")
        else:
            text = str(u.body or "")
            err = " ERR" if u.is_error else ""
            ex = f" exit={u.extra['exit']}" if "exit" in u.extra else ""
            short = text[:w].replace("\n", "⏎")
            more = f" …(+{len(text) - w})" if len(text) > w else ""
            print(f"   -> {u.name or 'RESULT'} {u.ident}{err}{ex}: {short}{more}")


if __name__ == "__main__":
    main()
