"""Codex session rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) → Trace, and the merge
of a rollout into an ``exec --json`` trace.

Calls and messages come from ``response_item`` records only: ``event_msg`` repeats the visible
ones (``user_message`` / ``agent_message`` / ``item_completed``) and is read just for the
cumulative ``token_count``, errors and aborts. ``function_call_output.output`` is unwrapped from
every wrapper FORMATS.md §2.2 lists (JSON with ``metadata.exit_code``, ``Exit code: N``,
``Process exited with code N``, JS-cell ``Script completed``, content lists, apply_patch text).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from knowmeter.traces._codex_exec import assign_turns, codex_error_text, shell_outcome
from knowmeter.traces._common import (
    Line,
    LineStats,
    SessionTrace,
    as_int,
    content_text,
    empty_usage,
    json_records,
    openai_usage,
    read_lines,
)
from knowmeter.traces._ir import (
    Event,
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolStatus,
    Trace,
    normalise_tool_name,
)
from knowmeter.traces._status import SHELL_TOOLS, classify_result, unwrap_shell

SOURCE = "codex-rollout"

_SHELL_NAMES = frozenset({"exec_command", "shell", "shell_command", "local_shell", "container.exec"})
_EXIT_PATTERNS = (
    re.compile(r"^Process exited with code (-?\d+)\s*$", re.M),
    re.compile(r"^Exit code: (-?\d+)\s*$", re.M),
)
_RUNNING = re.compile(r"^Process running with session ID", re.M)
_JS_EXEC = re.compile(r"exec_command\(\s*\{\s*cmd\s*:\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`)")
_SESSION_FIELDS = (
    ("id", "session_id"),
    ("cwd", "cwd"),
    ("cli_version", "agent_version"),
    ("originator", "originator"),
    ("source", "origin"),
    ("model_provider", "model_provider"),
)
#: rollout names whose ``exec --json`` item has another name
_RENAMES = {"update_plan": "TodoWrite"}
#: polls of a running command: the exec stream reports them inside that command's item
_NOT_MERGED = frozenset({"write_stdin"})
_WRAPPED = re.compile(r"^<([A-Za-z_][\w -]*)>.*</\1>\s*$", re.S)


def is_injected_codex_text(text: str) -> bool:
    """Context Codex writes as a user message: AGENTS.md, ``<environment_context>``, instructions."""
    s = text.lstrip()
    return s.startswith("# AGENTS.md instructions") or bool(_WRAPPED.match(s))


def unwrap_output(output: Any) -> tuple[str, int | None, bool | None, bool]:
    """``function_call_output.output`` → (text, exit code, success flag, still running)."""
    success: bool | None = None
    if isinstance(output, Mapping):
        success = output.get("success") if isinstance(output.get("success"), bool) else None
        output = output.get("content", output.get("output", ""))
    text = content_text(output) if isinstance(output, list) else str(output or "")
    if text.startswith("{"):
        try:
            blob = json.loads(text)
        except ValueError:
            blob = None
        if isinstance(blob, dict) and "output" in blob:
            md = blob.get("metadata")
            code = as_int(md.get("exit_code")) if isinstance(md, Mapping) else None
            return str(blob.get("output") or ""), code, success, False
    code = None
    for pattern in _EXIT_PATTERNS:
        m = pattern.search(text)
        if m:
            code = int(m.group(1))
            break
    running = code is None and bool(_RUNNING.search(text))
    if code is not None or running:
        _, sep, body = text.partition("\nOutput:\n")
        text = body if sep else text
    return text, code, success, running


class _Rollout:
    """State of one rollout parse."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.meta: dict[str, Any] = {}
        self.errors: list[str] = []
        self._calls: dict[str, ToolCallEvent] = {}

    def record(self, rec: Mapping[str, Any]) -> None:
        rtype = rec.get("type")
        stamp = rec.get("timestamp")
        if isinstance(stamp, str):
            self.meta.setdefault("started_at", stamp)
            self.meta["ended_at"] = stamp
        payload = rec.get("payload")
        if not isinstance(payload, Mapping):
            return
        if rtype == "response_item":
            self._item(payload)
        elif rtype == "event_msg":
            self._event(payload)
        elif rtype == "session_meta":
            for src, dst in _SESSION_FIELDS:
                if payload.get(src) is not None:
                    self.meta.setdefault(dst, payload[src])
        elif rtype == "turn_context" and isinstance(payload.get("model"), str):
            self.meta["model"] = payload["model"]
        elif rtype == "compacted" and isinstance(payload.get("message"), str):
            self.events.append(MessageEvent("system", payload["message"], injected=True))

    def _item(self, p: Mapping[str, Any]) -> None:
        ptype = p.get("type")
        if ptype == "message":
            self._message(p)
        elif ptype in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            call = _call_of(ptype, p)
            if call is None or call.id in self._calls:
                return
            self._calls[call.id] = call
            self.events.append(call)
            if ptype == "web_search_call":
                self.events.append(ToolResultEvent(call.id, "", ToolStatus.SUCCESS))
        elif ptype in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            self._output(p)

    def _message(self, p: Mapping[str, Any]) -> None:
        text = content_text(p.get("content"))
        if not text.strip():
            return
        role = p.get("role")
        if role == "assistant":
            self.events.append(MessageEvent("assistant", text))
        elif role == "user":
            self.events.append(MessageEvent("user", text, injected=is_injected_codex_text(text)))
        else:  # developer / system: instructions
            self.events.append(MessageEvent("system", text, injected=True))

    def _output(self, p: Mapping[str, Any]) -> None:
        cid = str(p.get("call_id") or p.get("id") or "")
        call = self._calls.get(cid)
        tool = call.tool if call is not None else ""
        text, code, success, running = unwrap_output(p.get("output"))
        if running:
            self.events.append(ToolResultEvent(cid, text, ToolStatus.UNKNOWN))
            return
        if tool in SHELL_TOOLS:
            command = str(call.input.get("command") or "") if call is not None else ""
            failed = "failed" if success is False else None
            outcome = shell_outcome(command, text, code, failed)
        else:
            is_error = None if success is None else not success
            outcome = classify_result(tool, text, is_error=is_error, exit_code=code)
        self.events.append(
            ToolResultEvent(cid, text, outcome.status, exit_code=outcome.exit_code, error_kind=outcome.error_kind)
        )

    def _event(self, p: Mapping[str, Any]) -> None:
        ptype = p.get("type")
        if ptype == "token_count":
            info = p.get("info")
            if isinstance(info, Mapping) and isinstance(info.get("total_token_usage"), Mapping):
                self.meta["usage"] = openai_usage(info["total_token_usage"])
        elif ptype in ("error", "stream_error") or (ptype == "task_complete" and p.get("error")):
            err = p.get("error") if ptype == "task_complete" else p.get("message")
            message = err.get("message") if isinstance(err, Mapping) else err
            text = codex_error_text(message or ptype)
            if text not in self.errors:
                self.errors.append(text)
                self.events.append(MessageEvent("system", text, injected=True))
        elif ptype == "turn_aborted":
            self.meta["aborted"] = p.get("reason") or True


def _call_of(ptype: Any, p: Mapping[str, Any]) -> ToolCallEvent | None:
    cid = p.get("call_id") or p.get("id")
    if not isinstance(cid, str):
        return None
    name = str(p.get("name") or ptype)
    if ptype == "function_call":
        raw = p.get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            args = {"arguments": raw}
        args = dict(args) if isinstance(args, Mapping) else {"arguments": args}
        if name in _SHELL_NAMES:
            command = args.pop("cmd", None) or args.pop("command", None)
            workdir = args.get("workdir")
            return ToolCallEvent(
                cid,
                "Bash",
                {"command": unwrap_shell(command), **args},
                source_tool=name,
                cwd=workdir if isinstance(workdir, str) and workdir else None,
            )
        return ToolCallEvent(cid, _tool_name(name), args, source_tool=name)
    if ptype == "custom_tool_call":
        script = str(p.get("input") or "")
        if name == "exec":  # newer Codex runs shell commands inside a JS cell
            m = _JS_EXEC.search(script)
            if m:
                return ToolCallEvent(
                    cid, "Bash", {"command": _js_string(m.group(1)), "script": script}, source_tool=name
                )
        key = "patch" if name == "apply_patch" else "input"
        return ToolCallEvent(cid, _tool_name(name), {key: script}, source_tool=name)
    if ptype == "local_shell_call":
        action = _mapping(p.get("action"))
        return ToolCallEvent(
            cid, "Bash", {"command": unwrap_shell(action.get("command"))}, source_tool="local_shell_call"
        )
    action = _mapping(p.get("action"))
    return ToolCallEvent(cid, "WebSearch", {"query": action.get("query")}, source_tool="web_search_call")


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _tool_name(name: str) -> str:
    """IR name of a rollout tool; MCP tools (``<server>__<tool>``) get the ``mcp__`` prefix the exec
    stream and Claude use."""
    if name in _RENAMES:
        return _RENAMES[name]
    if "__" in name and not name.startswith("mcp__"):
        return f"mcp__{name}"
    return normalise_tool_name(name)


def _js_string(literal: str) -> str:
    if literal.startswith('"'):
        try:
            return str(json.loads(literal))
        except ValueError:
            pass
    return literal[1:-1]


def parse_codex_rollout(lines: Iterable[Line]) -> Trace:
    """Parse a Codex rollout into a Trace. ``meta["usage"]`` is the last cumulative token count."""
    stats = LineStats()
    state = _Rollout()
    for rec in json_records(lines, stats):
        state.record(rec)
    turns = assign_turns(state.events)
    meta = state.meta
    stats.write_meta(meta)
    meta.setdefault("usage", empty_usage())
    meta.update(num_turns=turns, cost_usd=None)
    if state.errors:
        meta["error"] = "; ".join(state.errors)
    return Trace(events=state.events, source=SOURCE, meta=meta)


def merge_codex(exec_trace: Trace, rollout_trace: Trace) -> Trace:
    """The exec-stream trace plus the calls only the rollout has (commands the read-only sandbox
    blocked never reach ``exec --json``). Calls are matched in order — shell calls by command,
    others by tool — and each missing call (with its result) is placed after the last matched call
    before it. Turns are renumbered; the inputs are not modified."""
    by_key: dict[tuple[str, str], deque[ToolCallEvent]] = {}
    for e in exec_trace.events:
        if isinstance(e, ToolCallEvent):
            by_key.setdefault(_match_key(e), deque()).append(e)
    position = {id(e): i for i, e in enumerate(exec_trace.events)}
    result_pos = {e.id: i for i, e in enumerate(exec_trace.events) if isinstance(e, ToolResultEvent)}
    rollout_results = {e.id: e for e in rollout_trace.events if isinstance(e, ToolResultEvent)}
    inserts: dict[int, list[Event]] = {}
    anchor = -1
    added = 0
    for call in (e for e in rollout_trace.events if isinstance(e, ToolCallEvent)):
        if call.source_tool in _NOT_MERGED:
            continue
        queue = by_key.get(_match_key(call))
        if queue:
            matched = queue.popleft()
            anchor = result_pos.get(matched.id, position[id(matched)])
            continue
        added += 1
        extra: list[Event] = [dataclasses.replace(call)]
        if call.id in rollout_results:
            extra.append(dataclasses.replace(rollout_results[call.id]))
        inserts.setdefault(anchor, []).extend(extra)
    merged: list[Event] = [dataclasses.replace(e) for e in inserts.get(-1, [])]
    for i, e in enumerate(exec_trace.events):
        merged.append(dataclasses.replace(e))
        merged.extend(inserts.get(i, []))
    meta = dict(exec_trace.meta)
    meta.update(num_turns=assign_turns(merged), rollout_merged=True, recovered_calls=added)
    for key in ("cwd", "agent_version", "model"):
        if key in rollout_trace.meta:
            meta.setdefault(key, rollout_trace.meta[key])
    return Trace(events=merged, source=exec_trace.source, meta=meta)


def _match_key(call: ToolCallEvent) -> tuple[str, str]:
    return (call.tool, str(call.input.get("command") or "")) if call.tool in SHELL_TOOLS else (call.tool, "")


def read_codex_rollout_file(path: Path) -> Trace:
    """Parse one rollout file (line by line)."""
    trace = parse_codex_rollout(read_lines(path))
    trace.meta["path"] = str(path)
    return trace


def iter_codex_sessions(root: Path) -> Iterator[SessionTrace]:
    """Every rollout under ``root`` (a ``CODEX_HOME``, its ``sessions`` folder, or one file), one at a
    time. Compressed ``.jsonl.zst`` rollouts are not read (no zstd in the standard library)."""
    if root.is_file():
        paths: Iterable[Path] = [root]
    else:
        bases = [root / d for d in ("sessions", "archived_sessions") if (root / d).is_dir()] or [root]
        paths = (p for base in bases for p in sorted(base.rglob("rollout-*.jsonl")))
    for path in paths:
        trace = read_codex_rollout_file(path)
        yield SessionTrace(session_id=str(trace.meta.get("session_id") or path.stem), path=path, main=trace)
