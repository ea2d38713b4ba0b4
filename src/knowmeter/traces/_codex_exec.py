"""Codex ``codex exec --json`` (JSONL on stdout) → Trace + run summary.

Items: ``command_execution`` (→ Bash call + result with ``exit_code`` / ``status``), ``agent_message``,
``reasoning`` (no event), ``file_change``, ``mcp_tool_call``, ``web_search``, ``todo_list`` and
``error`` items. ``turn.completed`` carries per-turn usage (normalised by ``openai_usage``: its
``input_tokens`` include the cached ones); the stream has no cost (None) and no
duration. The stream does not say which API response made which item, so turns are assigned with
``assign_turns``: a model event that follows a tool result or a user message starts a new turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from knowmeter.traces._common import (
    Line,
    LineStats,
    RunSummary,
    add_usage,
    as_int,
    empty_usage,
    json_records,
    openai_usage,
)
from knowmeter.traces._ir import (
    ErrorKind,
    Event,
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolStatus,
    Trace,
)
from knowmeter.traces._status import Outcome, classify_result, unwrap_shell

SOURCE = "codex-exec-json"


def assign_turns(events: list[Event]) -> int:
    """Number the model turns of a Codex event list in place and return how many there are.

    A tool call or assistant message that follows a tool result or a user message (or starts the
    trace) opens a new turn; parallel calls made before any result share one. Results carry the
    turn of their call; harness messages the current turn.
    """
    turn = 0
    open_turn = False
    call_turn: dict[str, int] = {}
    for e in events:
        if isinstance(e, ToolResultEvent):
            e.turn = call_turn.get(e.id, turn)
            open_turn = False
        elif isinstance(e, ToolCallEvent) or (e.role == "assistant" and not e.injected):
            if not open_turn:
                turn += 1
                open_turn = True
            e.turn = turn
            if isinstance(e, ToolCallEvent):
                call_turn[e.id] = turn
        else:
            e.turn = turn
            if e.role == "user" and not e.injected:
                open_turn = False
    return turn


def shell_outcome(command: str, output: str, exit_code: int | None, status: str | None) -> Outcome:
    """Classify a Codex shell result from its exit code and item status
    (``declined`` = refused by the approval policy or sandbox)."""
    if status == "declined":
        return Outcome(ToolStatus.FAILURE, ErrorKind.PERMISSION_DENIED, exit_code)
    failed = status == "failed" or (exit_code is not None and exit_code != 0)
    return classify_result("Bash", output, is_error=failed, exit_code=exit_code, command=command)


class _ExecItems:
    """Turns ``item.*`` payloads into events; one instance per stream."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.last_message = ""
        self._started: set[str] = set()
        self._done: set[str] = set()
        self._reuse: dict[str, int] = {}

    def _id(self, raw: str, starting: bool) -> str:
        """Item ids (``item_N``) are unique per turn only; a reused id gets a ``#n`` suffix."""
        n = self._reuse.get(raw, 0)
        cid = raw if n == 0 else f"{raw}#{n}"
        if starting and cid in self._done:
            self._reuse[raw] = n + 1
            cid = f"{raw}#{n + 1}"
        return cid

    def item(self, item: Mapping[str, Any], *, completed: bool) -> None:
        itype = item.get("type")
        raw_id = str(item.get("id") or f"item@{len(self.events)}")
        cid = self._id(raw_id, starting=not completed)
        if completed and cid in self._done:  # a completed-only item (file_change) reusing an id
            cid = self._id(raw_id, starting=True)
        if itype == "agent_message":
            if completed and isinstance(item.get("text"), str):
                self.last_message = item["text"]
                self.events.append(MessageEvent("assistant", item["text"]))
            return
        if itype == "error":
            if completed:
                self.events.append(MessageEvent("system", str(item.get("message") or ""), injected=True))
            return
        call = _call_of(itype, item, cid)
        if call is None:
            return
        if cid not in self._started:
            self._started.add(cid)
            self.events.append(call)
        if completed and cid not in self._done:
            self._done.add(cid)
            self.events.append(_result_of(itype, item, cid, call))


def _call_of(itype: Any, item: Mapping[str, Any], cid: str) -> ToolCallEvent | None:
    if itype == "command_execution":
        return ToolCallEvent(
            cid, "Bash", {"command": unwrap_shell(str(item.get("command") or ""))}, source_tool="command_execution"
        )
    if itype == "file_change":
        return ToolCallEvent(cid, "Edit", {"changes": item.get("changes") or []}, source_tool="file_change")
    if itype == "mcp_tool_call":
        name = f"mcp__{item.get('server')}__{item.get('tool')}"
        args = item.get("arguments")
        return ToolCallEvent(
            cid, name, dict(args) if isinstance(args, Mapping) else {"arguments": args}, source_tool=name
        )
    if itype == "web_search":
        return ToolCallEvent(cid, "WebSearch", {"query": item.get("query")}, source_tool="web_search")
    if itype == "todo_list":
        return ToolCallEvent(cid, "TodoWrite", {"items": item.get("items") or []}, source_tool="todo_list")
    return None


def _result_of(itype: Any, item: Mapping[str, Any], cid: str, call: ToolCallEvent) -> ToolResultEvent:
    status = item.get("status")
    if itype == "command_execution":
        output = str(item.get("aggregated_output") or "")
        outcome = shell_outcome(
            str(call.input.get("command") or ""),
            output,
            as_int(item.get("exit_code")),
            status if isinstance(status, str) else None,
        )
        return ToolResultEvent(cid, output, outcome.status, exit_code=outcome.exit_code, error_kind=outcome.error_kind)
    if itype == "mcp_tool_call":
        error = item.get("error")
        if isinstance(error, Mapping):
            return ToolResultEvent(cid, str(error.get("message") or ""), ToolStatus.FAILURE, error_kind=ErrorKind.OTHER)
        output = json.dumps(item.get("result"), ensure_ascii=False) if item.get("result") is not None else ""
        return ToolResultEvent(cid, output, _status_word(status))
    output = json.dumps(item.get("changes"), ensure_ascii=False) if itype == "file_change" else ""
    st = _status_word(status)
    return ToolResultEvent(cid, output, st, error_kind=ErrorKind.OTHER if st is ToolStatus.FAILURE else None)


def _status_word(status: Any) -> ToolStatus:
    if status == "failed":
        return ToolStatus.FAILURE
    if status == "declined":
        return ToolStatus.CANCELLED
    return ToolStatus.SUCCESS


def parse_codex_exec(lines: Iterable[Line]) -> tuple[Trace, RunSummary]:
    """Parse a ``codex exec --json`` stream into a Trace and the run summary (last agent message,
    usage summed over ``turn.completed``, cost None, error from ``turn.failed`` / ``error``)."""
    stats = LineStats()
    items = _ExecItems()
    usage = empty_usage()
    meta: dict[str, Any] = {}
    errors: list[str] = []
    skipped: dict[str, int] = {}
    for rec in json_records(lines, stats):
        rtype = rec.get("type")
        item = rec.get("item")
        if rtype in ("item.started", "item.updated", "item.completed") and isinstance(item, Mapping):
            items.item(item, completed=rtype == "item.completed")
        elif rtype == "thread.started":
            meta["session_id"] = rec.get("thread_id")
        elif rtype == "turn.completed":
            add_usage(usage, openai_usage(rec.get("usage")))
        elif rtype in ("turn.failed", "error"):
            err = rec.get("error")
            message = err.get("message") if isinstance(err, Mapping) else rec.get("message")
            text = codex_error_text(message)
            if rtype == "error" or text not in errors:
                items.events.append(MessageEvent("system", text, injected=True))
            if text not in errors:
                errors.append(text)
        elif rtype != "turn.started":
            skipped[str(rtype)] = skipped.get(str(rtype), 0) + 1
    turns = assign_turns(items.events)
    stats.write_meta(meta)
    error = "; ".join(errors) or None
    meta.update(usage=usage, cost_usd=None, num_turns=turns, skipped_records=skipped)
    if error is not None:
        meta["error"] = error
    summary = RunSummary(
        output=items.last_message,
        usage=usage,
        cost_usd=None,
        num_turns=turns or None,
        error=error,
        session_id=meta.get("session_id"),
    )
    return Trace(events=items.events, source=SOURCE, meta=meta), summary


def codex_error_text(message: Any) -> str:
    """Codex wraps API errors as a JSON string ``{"error": {"message": …}}``; unwrap it."""
    text = str(message or "unknown error")
    if text.startswith("{"):
        try:
            inner = json.loads(text)
        except ValueError:
            return text
        err = inner.get("error") if isinstance(inner, dict) else None
        if isinstance(err, Mapping) and err.get("message"):
            return f"API error: {err['message']}"
    return text
