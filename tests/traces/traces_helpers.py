"""Independent counts read straight from the raw JSON lines (no adapter code), to check the
adapters against; plus small builders for synthetic lines."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

_PROCESS_EXIT = re.compile(r"Process exited with code (-?\d+)")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def claude_raw(path: Path) -> dict[str, Any]:
    """Tool uses per name (unique ids), tool results, is_error results and API message ids in order,
    from top-level ``assistant`` / ``user`` records of a stream-json or session file."""
    tools: Counter[str] = Counter()
    call_ids: set[str] = set()
    result_ids: set[str] = set()
    errors: set[str] = set()
    message_ids: list[str] = []
    call_message: dict[str, str] = {}
    usage: dict[str, dict[str, Any]] = {}
    for rec in records(path):
        msg = rec.get("message")
        if not isinstance(msg, dict):
            continue
        if rec.get("type") == "assistant" and msg.get("model") != "<synthetic>":
            if msg["id"] not in message_ids:
                message_ids.append(msg["id"])
            usage[msg["id"]] = msg.get("usage") or {}
            for block in msg.get("content") or []:
                if block.get("type") == "tool_use" and block["id"] not in call_ids:
                    call_ids.add(block["id"])
                    call_message[block["id"]] = msg["id"]
                    tools[block["name"]] += 1
        elif rec.get("type") == "user" and isinstance(msg.get("content"), list):
            for block in msg["content"]:
                if block.get("type") == "tool_result":
                    result_ids.add(block["tool_use_id"])
                    if block.get("is_error"):
                        errors.add(block["tool_use_id"])
    return {
        "tools": tools,
        "results": result_ids,
        "errors": errors,
        "message_ids": message_ids,
        "call_message": call_message,
        "usage": usage,
    }


def codex_exec_raw(path: Path) -> dict[str, Any]:
    """Completed items per type, failed command count and exit codes of an ``exec --json`` stream."""
    items: Counter[str] = Counter()
    exits: Counter[int] = Counter()
    failed = 0
    for rec in records(path):
        if rec.get("type") != "item.completed":
            continue
        item = rec["item"]
        items[item["type"]] += 1
        if item["type"] == "command_execution":
            exits[item["exit_code"]] += 1
            failed += item["status"] == "failed"
    return {"items": items, "exits": exits, "failed": failed}


def rollout_raw(path: Path) -> dict[str, Any]:
    """Function calls per name, outputs, and outputs whose wrapper reports a non-zero exit."""
    calls: Counter[str] = Counter()
    outputs = 0
    nonzero = 0
    for rec in records(path):
        p = rec.get("payload") or {}
        if rec.get("type") != "response_item":
            continue
        if p.get("type") == "function_call":
            calls[p["name"]] += 1
        elif p.get("type") == "function_call_output":
            outputs += 1
            m = _PROCESS_EXIT.search(p["output"])
            nonzero += bool(m and m.group(1) != "0")
    return {"calls": calls, "outputs": outputs, "nonzero": nonzero}


def jsonl(*recs: dict[str, Any]) -> list[str]:
    """Records as JSONL lines, in Claude's compact style."""
    return [json.dumps(r, separators=(",", ":")) + "\n" for r in recs]
