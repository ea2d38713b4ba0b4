"""Claude Code ``-p --output-format stream-json --verbose`` (and the Agent SDK's message dicts) → Trace.

``ClaudeMessages`` turns Claude's Messages-API shaped ``assistant`` / ``user`` messages into IR
events; the session-JSONL adapter reuses it. It deduplicates by ``message.id`` (one API message is
written as one line per content block, each repeating the same ``usage``), numbers turns by API
message, pairs results with calls by ``tool_use_id`` and marks harness text as injected.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any

from knowmeter.traces._common import (
    Line,
    LineStats,
    RunSummary,
    UsageTotals,
    anthropic_usage,
    as_int,
    content_text,
    json_records,
    model_usage_totals,
)
from knowmeter.traces._ir import (
    ErrorKind,
    Event,
    MessageEvent,
    Role,
    ToolCallEvent,
    ToolResultEvent,
    ToolStatus,
    Trace,
    normalise_tool_name,
)
from knowmeter.traces._status import SHELL_TOOLS, classify_result

SOURCE = "claude-stream-json"

#: User-side text that the harness wrote, not the human (FORMATS.md §1.5).
_INJECTED_PREFIXES = (
    "<system-reminder>",
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "Caveat: The messages below",
    "<task-notification>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "This session is being continued from a previous conversation",
    "Base directory for this skill:",
)
_HOOK_TEXT = re.compile(
    r"^\S+ hook (?:additional context|feedback|error|blocking error|success)\b"
    r"|^Stop hook "
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def _is_injected_text(text: str) -> bool:
    """True for harness text in a user turn: reminders, slash-command echoes, hook output, …"""
    s = text.lstrip()
    return s.startswith(_INJECTED_PREFIXES) or bool(_HOOK_TEXT.match(s))


class ClaudeMessages:
    """Builds IR events from Claude ``assistant`` / ``user`` messages, one message at a time.

    ``injected_all`` marks every message as injected (compaction transcripts).
    """

    def __init__(self, *, injected_all: bool = False) -> None:
        self.injected_all = injected_all
        self.turn = 0
        self.api_errors = 0
        self.model: str | None = None
        self._msg_turn: dict[str, int] = {}
        self._usage_totals = UsageTotals()
        self._latest_usage = self._usage_totals.latest  # per message, its last line's (final) usage
        self._calls: dict[str, tuple[str, str | None, int, str | None]] = {}  # id → tool, command, turn, agent
        self._seen_results: set[str] = set()
        self._tools: dict[str, str] = {}  # source tool name → normalised name
        self._anon = 0

    def assistant(
        self,
        message: Mapping[str, Any],
        out: list[Event],
        agent_id: str | None = None,
        synthetic: bool = False,
        cwd: str | None = None,
    ) -> None:
        """Append the events of one assistant line to ``out``. ``synthetic``: an API-error message
        the harness wrote; ``cwd``: the shell's directory when the line was written, when it is not
        the session's."""
        model = message.get("model")
        content = message.get("content")
        if synthetic or model == "<synthetic>":
            self.api_errors += 1
            text = content_text(content)
            if text:
                out.append(MessageEvent("assistant", text, turn=self.turn, injected=True, agent_id=agent_id))
            return
        if isinstance(model, str):
            self.model = model
        raw_id = message.get("id")
        if isinstance(raw_id, str):
            mid = raw_id
        else:
            self._anon += 1
            mid = f"\0line{self._anon}"
        turn = self._msg_turn.get(mid)
        if turn is None:
            self.turn += 1
            turn = self._msg_turn[mid] = self.turn
        usage = message.get("usage")
        if usage is not None:  # counted when the totals are asked for: only a message's last line counts
            self._latest_usage[mid] = usage
        if isinstance(content, str):
            if content.strip():
                out.append(MessageEvent("assistant", content, turn=turn, injected=self.injected_all, agent_id=agent_id))
            return
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_use" or btype == "server_tool_use":
                self._call(block, turn, agent_id, out, cwd)
            elif btype == "text":
                said = block.get("text")
                if isinstance(said, str) and said.strip():
                    out.append(
                        MessageEvent("assistant", said, turn=turn, injected=self.injected_all, agent_id=agent_id)
                    )

    def _call(
        self, block: Mapping[str, Any], turn: int, agent_id: str | None, out: list[Event], cwd: str | None
    ) -> None:
        cid = block.get("id")
        if not isinstance(cid, str) or cid in self._calls:
            return
        source = block.get("name") or ""
        if not isinstance(source, str):
            source = str(source)
        tool = self._tools.get(source)
        if tool is None:
            tool = self._tools[source] = normalise_tool_name(source)
        args = block.get("input")
        if not isinstance(args, dict):
            args = {}
        command = args.get("command") if tool in SHELL_TOOLS else None
        self._calls[cid] = (tool, command if isinstance(command, str) else None, turn, agent_id)
        out.append(ToolCallEvent(cid, tool, args, turn=turn, source_tool=source, agent_id=agent_id, cwd=cwd))

    def user(
        self,
        message: Mapping[str, Any],
        out: list[Event],
        agent_id: str | None = None,
        structured: Any = None,
        injected: bool = False,
    ) -> None:
        """Append the events of one user line (tool results and/or text) to ``out``. ``structured``
        is the line's ``tool_use_result`` / ``toolUseResult``; ``injected`` marks ``isMeta``-style lines."""
        content = message.get("content")
        if isinstance(content, str):
            self._user_text(content, agent_id, injected, out)
            return
        if not isinstance(content, list):
            return
        if (
            structured is not None
            and len(content) != 1
            and sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result") != 1
        ):
            structured = None  # several results share the line: whose structured output it is is unknown
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                self._result(block, agent_id, structured, out)
            elif btype == "text":
                text = block.get("text")
                if isinstance(text, str):
                    self._user_text(text, agent_id, injected, out)

    def _result(self, block: Mapping[str, Any], agent_id: str | None, structured: Any, out: list[Event]) -> None:
        cid = block.get("tool_use_id")
        if not isinstance(cid, str) or cid in self._seen_results:
            return
        self._seen_results.add(cid)
        call = self._calls.get(cid)
        tool, command, turn, call_agent = call if call is not None else ("", None, self.turn, agent_id)
        content = block.get("content")
        text = content if isinstance(content, str) else content_text(content)
        status, kind, code = classify_result(
            tool, text, is_error=bool(block.get("is_error")), command=command, structured=structured
        )
        out.append(ToolResultEvent(cid, text, status, turn=turn, exit_code=code, error_kind=kind, agent_id=call_agent))

    def _user_text(self, text: str, agent_id: str | None, injected: bool, out: list[Event]) -> None:
        if not text.strip():
            return
        injected = injected or self.injected_all
        if not injected and "<system-reminder>" in text:  # reminders glued to the human's words
            for m in _REMINDER.finditer(text):
                out.append(MessageEvent("user", m.group(0), self.turn, injected=True, agent_id=agent_id))
            text = _REMINDER.sub("", text).strip()
            if not text:
                return
        injected = injected or _is_injected_text(text)
        out.append(MessageEvent("user", text, self.turn, injected=injected, agent_id=agent_id))

    def harness_text(self, role: Role, text: str, agent_id: str | None = None) -> MessageEvent:
        """An injected message (system notices, compaction markers) at the current turn."""
        return MessageEvent(role, text, self.turn, injected=True, agent_id=agent_id)

    @property
    def api_messages(self) -> int:
        """Distinct API messages seen (deduplicated by ``message.id``)."""
        return len(self._msg_turn)

    def usage(self) -> dict[str, int | None]:
        """Token usage summed once per API message (the last line of a message carries its final usage)."""
        return self._usage_totals.totals()


_LEADING_CD = re.compile(r"""^\s*cd\s+(?:"([^"]+)"|'([^']+)'|([^\s;&|()<>'"]+))\s*(?:&&|;|\n|$)""")
_CWD_RESET = re.compile(r"Shell cwd was reset to (\S+)")
_CD_FAILED = re.compile(r"\bcd: .*(?:No such file or directory|Not a directory|Permission denied)")


def track_shell_cwd(events: list[Event], cwd: str) -> None:
    """Claude Code's Bash keeps its directory between calls; a stream has no per-call ``cwd``
    (session files do). Set ``ToolCallEvent.cwd`` of each later call after a command that starts
    with ``cd X`` (and did not report the ``cd`` failing); "Shell cwd was reset to D" in an output
    moves it to D. Calls in the session's own directory keep ``cwd`` None."""
    current = cwd
    pending: dict[str, str] = {}  # Bash call id → where its leading cd goes
    for e in events:
        if isinstance(e, ToolCallEvent):
            if e.agent_id is not None or e.tool not in SHELL_TOOLS:
                continue
            if current != cwd and e.cwd is None:
                e.cwd = current
            m = _LEADING_CD.match(str(e.input.get("command") or ""))
            target = next((g for g in m.groups() if g), "") if m else ""
            if target and not target.startswith(("~", "-", "$")):  # home, back, a variable: unknown
                pending[e.id] = target if target.startswith("/") else posixpath.normpath(f"{current}/{target}")
        elif isinstance(e, ToolResultEvent):
            reset = _CWD_RESET.search(e.output[-500:])
            if reset:
                current = reset.group(1).rstrip(".")
            elif e.id in pending and not _CD_FAILED.search(e.output[:500]):
                current = pending[e.id]


def _mark_permission_denials(events: list[Event], denied_ids: set[str]) -> None:
    """Results of calls listed in ``result.permission_denials`` are permission denials whatever their text."""
    if not denied_ids:
        return
    for e in events:
        if isinstance(e, ToolResultEvent) and e.id in denied_ids and e.status is not ToolStatus.SUCCESS:
            e.error_kind = ErrorKind.PERMISSION_DENIED


def parse_claude_stream(lines: Iterable[Line]) -> tuple[Trace, RunSummary]:
    """Parse a Claude stream-json run (text lines, or the SDK's message dicts) into a Trace and the
    run's summary (final text, usage, cost, turns, API duration, error). Unknown record types and
    undecodable lines (e.g. a truncated last line) are skipped and counted in ``trace.meta``."""
    stats = LineStats()
    msgs = ClaudeMessages()
    events: list[Event] = []
    meta: dict[str, Any] = {}
    skipped: dict[str, int] = {}
    result: dict[str, Any] | None = None
    for rec in json_records(lines, stats):
        rtype = rec.get("type")
        message = rec.get("message")
        agent_id = rec.get("parent_tool_use_id") if isinstance(rec.get("parent_tool_use_id"), str) else None
        if rtype == "assistant" and isinstance(message, Mapping):
            msgs.assistant(message, events, agent_id=agent_id)
        elif rtype == "user" and isinstance(message, Mapping):
            injected = bool(rec.get("isMeta") or rec.get("isSynthetic"))
            msgs.user(message, events, agent_id=agent_id, structured=rec.get("tool_use_result"), injected=injected)
        elif rtype == "system" and rec.get("subtype") == "init":
            _init_meta(rec, meta)
        elif rtype == "result":
            result = rec
        else:
            key = str(rtype) if rtype != "system" else f"system/{rec.get('subtype')}"
            skipped[key] = skipped.get(key, 0) + 1
    if isinstance(meta.get("cwd"), str):
        track_shell_cwd(events, meta["cwd"])
    summary = _summary(result, msgs, events, meta)
    if result is not None:
        denied = {d.get("tool_use_id") for d in summary.permission_denials if isinstance(d, Mapping)}
        _mark_permission_denials(events, {d for d in denied if isinstance(d, str)})
    stats.write_meta(meta)
    meta.update(
        api_messages=msgs.api_messages,
        api_errors=msgs.api_errors,
        usage=summary.usage,
        cost_usd=summary.cost_usd,
        num_turns=summary.num_turns,
        skipped_records=skipped,
    )
    if summary.error is not None:
        meta["error"] = summary.error
    meta.setdefault("model", msgs.model)
    return Trace(events=events, source=SOURCE, meta=meta), summary


def _init_meta(rec: Mapping[str, Any], meta: dict[str, Any]) -> None:
    for src, dst in (
        ("session_id", "session_id"),
        ("model", "model"),
        ("cwd", "cwd"),
        ("claude_code_version", "agent_version"),
        ("permissionMode", "permission_mode"),
        ("tools", "tools"),
        ("skills", "skills"),
        ("agents", "agents"),
        ("plugins", "plugins"),
        ("mcp_servers", "mcp_servers"),
    ):
        if rec.get(src) is not None:
            meta[dst] = rec[src]


def _summary(
    result: Mapping[str, Any] | None, msgs: ClaudeMessages, events: list[Event], meta: Mapping[str, Any]
) -> RunSummary:
    own_texts = [
        e.text
        for e in events
        if isinstance(e, MessageEvent) and e.role == "assistant" and not e.injected and e.agent_id is None
    ]
    last_text = own_texts[-1] if own_texts else ""
    if result is None:
        return RunSummary(
            output=last_text,
            usage=msgs.usage(),
            num_turns=msgs.api_messages or None,
            error="the stream ended without a result line (the run was cut short)",
            session_id=meta.get("session_id"),
            model=msgs.model,
        )
    is_error = bool(result.get("is_error")) or str(result.get("subtype", "success")) != "success"
    text = result.get("result") if isinstance(result.get("result"), str) else None
    error: str | None = None
    if is_error:
        errors = [str(e) for e in result.get("errors") or [] if e]
        error = text or "; ".join(errors) or str(result.get("subtype") or "error")
    # ``usage`` is the main loop's model only; ``modelUsage`` adds the secondary model's calls
    usage = model_usage_totals(result.get("modelUsage")) or (
        anthropic_usage(result.get("usage")) if isinstance(result.get("usage"), Mapping) else msgs.usage()
    )
    cost = result.get("total_cost_usd", result.get("cost_usd"))
    denials = result.get("permission_denials")
    return RunSummary(
        output=(text if text is not None and not is_error else last_text),
        usage=usage,
        cost_usd=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
        num_turns=as_int(result.get("num_turns")),
        duration_ms=_float(result.get("duration_ms")),
        duration_api_ms=_float(result.get("duration_api_ms")),
        error=error,
        session_id=result.get("session_id") or meta.get("session_id"),
        model=msgs.model or meta.get("model"),
        api_error_status=as_int(result.get("api_error_status")),
        permission_denials=[dict(d) for d in denials if isinstance(d, Mapping)] if isinstance(denials, list) else [],
    )


def _float(v: Any) -> float | None:
    n = as_int(v)
    return float(v) if n is not None else None
