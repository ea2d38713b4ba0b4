"""Trace IR: the one event model every agent's output is normalised into.

A trace is an ordered list of events:

- ``MessageEvent``   — text said by the user, the assistant or the harness.
- ``ToolCallEvent``  — the agent asked a tool to run (normalised tool name + source name).
- ``ToolResultEvent``— what the tool gave back, with a status and, where the source says why a
  call failed, an ``error_kind``.

The IR is made of slotted dataclasses (not pydantic models): adapters build hundreds of
thousands of events when scanning real session folders, and plain dataclasses keep that fast.
``to_dict`` / ``trace_from_dict`` give the JSON form stored in ``results.jsonl``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal


class ToolStatus(StrEnum):
    """Outcome of one tool call."""

    SUCCESS = "success"
    FAILURE = "failure"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


class ErrorKind(StrEnum):
    """Why a tool result is not a plain success (see reference/traces/FORMATS.md §5).

    Only ``EMPTY_SEARCH``, ``NOT_FOUND`` and ``NONZERO_EXIT`` can be knowledge gaps; the rest are
    environment, permission or harness events.
    """

    EMPTY_SEARCH = "empty_search"  # a search that ran and found nothing (not an error to the agent)
    NOT_FOUND = "not_found"  # a path that does not exist
    NONZERO_EXIT = "nonzero_exit"  # a shell command that exited non-zero
    COMMAND_MISSING = "command_missing"  # exit 127: an environment gap, not a knowledge gap
    PERMISSION_DENIED = "permission_denied"
    USER_REJECTED = "user_rejected"
    CANCELLED_SIBLING = "cancelled_sibling"
    TOOL_MISUSE = "tool_misuse"  # e.g. edit before read, unknown tool, bad arguments
    API_ERROR = "api_error"
    SANDBOX = "sandbox"  # the tool could not start in its sandbox (e.g. codex's bubblewrap): an environment fault
    TIMEOUT = "timeout"
    OTHER = "other"


Role = Literal["user", "assistant", "system"]

#: Normalised tool names. Adapters map each source's names onto these; ``source_tool`` keeps
#: the original. Names not in this map are kept as they are.
TOOL_ALIASES: dict[str, str] = {
    # Claude Code names are the canonical ones
    "read": "Read",
    "grep": "Grep",
    "glob": "Glob",
    "bash": "Bash",
    "write": "Write",
    "edit": "Edit",
    "multiedit": "Edit",
    "websearch": "WebSearch",
    "webfetch": "WebFetch",
    "task": "Task",
    "agent": "Task",
    "todowrite": "TodoWrite",
    "skill": "Skill",
    "ls": "LS",
    # Codex / Gemini / other agents
    "exec_command": "Bash",
    "shell": "Bash",
    "local_shell": "Bash",
    "container.exec": "Bash",
    "command_execution": "Bash",
    "run_shell_command": "Bash",
    "read_file": "Read",
    "read_many_files": "Read",
    "search_file_content": "Grep",
    "grep_search": "Grep",
    "list_directory": "LS",
    "write_file": "Write",
    "replace": "Edit",
    "apply_patch": "Edit",
    "web_search": "WebSearch",
    "web_search_call": "WebSearch",
    "google_web_search": "WebSearch",
    "web_fetch": "WebFetch",
}


def normalise_tool_name(name: str) -> str:
    """Map a source tool name to the IR's name (``exec_command`` → ``Bash``); unknown names stay."""
    return TOOL_ALIASES.get(name.lower(), name)


@dataclass(slots=True)
class MessageEvent:
    """Text in the conversation. ``injected`` marks harness text (reminders, hook output,
    compaction summaries, synthetic errors): it is not the agent's own words."""

    role: Role
    text: str
    turn: int = 0
    injected: bool = False
    agent_id: str | None = None
    kind: Literal["message"] = "message"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "message", "role": self.role, "text": self.text, "turn": self.turn}
        if self.injected:
            d["injected"] = True
        if self.agent_id is not None:
            d["agent_id"] = self.agent_id
        return d


@dataclass(slots=True)
class ToolCallEvent:
    """A tool the agent called. ``tool`` is normalised, ``source_tool`` is the name the agent used.
    ``cwd`` is the directory the call ran in when the source records one that differs from the
    trace's ``meta["cwd"]`` (Claude's per-record ``cwd`` after a ``cd``, Codex's ``workdir``)."""

    id: str
    tool: str
    input: dict[str, Any]
    turn: int = 0
    source_tool: str | None = None
    agent_id: str | None = None
    cwd: str | None = None
    kind: Literal["tool_call"] = "tool_call"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": "tool_call",
            "id": self.id,
            "tool": self.tool,
            "input": self.input,
            "turn": self.turn,
        }
        if self.source_tool is not None and self.source_tool != self.tool:
            d["source_tool"] = self.source_tool
        if self.agent_id is not None:
            d["agent_id"] = self.agent_id
        if self.cwd is not None:
            d["cwd"] = self.cwd
        return d


@dataclass(slots=True)
class ToolResultEvent:
    """What a tool returned to the agent. ``id`` is the id of the ``ToolCallEvent`` it answers."""

    id: str
    output: str
    status: ToolStatus
    turn: int = 0
    exit_code: int | None = None
    error_kind: ErrorKind | None = None
    agent_id: str | None = None
    kind: Literal["tool_result"] = "tool_result"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": "tool_result",
            "id": self.id,
            "output": self.output,
            "status": self.status.value,
            "turn": self.turn,
        }
        if self.exit_code is not None:
            d["exit_code"] = self.exit_code
        if self.error_kind is not None:
            d["error_kind"] = self.error_kind.value
        if self.agent_id is not None:
            d["agent_id"] = self.agent_id
        return d


Event = MessageEvent | ToolCallEvent | ToolResultEvent


@dataclass(slots=True)
class ToolInvocation:
    """A tool call joined with its result (``result`` is None when the trace has none)."""

    call: ToolCallEvent
    result: ToolResultEvent | None

    @property
    def status(self) -> ToolStatus:
        return self.result.status if self.result is not None else ToolStatus.UNKNOWN


@dataclass(slots=True)
class Trace:
    """An agent run as ordered events, plus where it came from (``source``: e.g.
    ``claude-stream-json``, ``offline``) and free-form metadata (agent version, model, cwd,
    session id)."""

    events: list[Event] = field(default_factory=list)
    source: str = "unknown"
    meta: dict[str, Any] = field(default_factory=dict)

    def tool_calls(self) -> list[ToolCallEvent]:
        return [e for e in self.events if isinstance(e, ToolCallEvent)]

    def invocations(self) -> list[ToolInvocation]:
        """Every tool call with its result, in call order."""
        results = {e.id: e for e in self.events if isinstance(e, ToolResultEvent)}
        return [ToolInvocation(c, results.get(c.id)) for c in self.events if isinstance(c, ToolCallEvent)]

    def messages(self, role: Role | None = None, *, include_injected: bool = False) -> Iterator[MessageEvent]:
        for e in self.events:
            if (
                isinstance(e, MessageEvent)
                and (role is None or e.role == role)
                and (include_injected or not e.injected)
            ):
                yield e

    def assistant_text(self) -> str:
        """The agent's own words (injected text excluded), joined by blank lines."""
        return "\n\n".join(m.text for m in self.messages("assistant") if m.text)

    @property
    def turns(self) -> int:
        """Number of assistant turns (highest turn index seen)."""
        return max((e.turn for e in self.events), default=0)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "meta": self.meta, "events": [e.to_dict() for e in self.events]}


def event_from_dict(d: dict[str, Any]) -> Event:
    """Rebuild one event from its ``to_dict`` form."""
    kind = d.get("kind")
    if kind == "message":
        return MessageEvent(
            role=d["role"],
            text=d.get("text", ""),
            turn=d.get("turn", 0),
            injected=d.get("injected", False),
            agent_id=d.get("agent_id"),
        )
    if kind == "tool_call":
        return ToolCallEvent(
            id=d["id"],
            tool=d["tool"],
            input=d.get("input") or {},
            turn=d.get("turn", 0),
            source_tool=d.get("source_tool", d["tool"]),
            agent_id=d.get("agent_id"),
            cwd=d.get("cwd"),
        )
    if kind == "tool_result":
        ek = d.get("error_kind")
        return ToolResultEvent(
            id=d["id"],
            output=d.get("output", ""),
            status=ToolStatus(d["status"]),
            turn=d.get("turn", 0),
            exit_code=d.get("exit_code"),
            error_kind=ErrorKind(ek) if ek else None,
            agent_id=d.get("agent_id"),
        )
    raise ValueError(f"unknown trace event kind: {kind!r}")


def trace_from_dict(d: dict[str, Any]) -> Trace:
    """Rebuild a trace from its ``to_dict`` form."""
    return Trace(
        events=[event_from_dict(e) for e in d.get("events", [])],
        source=d.get("source", "unknown"),
        meta=dict(d.get("meta") or {}),
    )
