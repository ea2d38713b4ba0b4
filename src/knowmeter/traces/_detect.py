"""Which agent trace format a file is in, and loading any supported trace file or folder.

The format is decided by the first non-empty line that is a JSON object (FORMATS.md §0), or,
for a log of Claude Agent SDK messages written with ``str()``, by its first line
(``SystemMessage(…)``, ``AssistantMessage(…)``: read by ``_claude_repr``). Gemini streams,
legacy Codex protocol streams and other files are refused with a one-line ``InputError`` that
says what to do instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from knowmeter.errors import InputError
from knowmeter.traces._claude_repr import parse_claude_repr
from knowmeter.traces._claude_session import load_claude_session, read_claude_session_file
from knowmeter.traces._claude_stream import parse_claude_stream
from knowmeter.traces._codex_exec import parse_codex_exec
from knowmeter.traces._codex_rollout import read_codex_rollout_file
from knowmeter.traces._common import SessionTrace
from knowmeter.traces._ir import Trace


class TraceFormat(StrEnum):
    """The trace formats knowmeter reads."""

    CLAUDE_STREAM = "claude-stream-json"
    CLAUDE_SESSION = "claude-session-jsonl"
    CODEX_EXEC = "codex-exec-json"
    CODEX_ROLLOUT = "codex-rollout"
    CLAUDE_SDK_REPR = "claude-sdk-repr"


SUPPORTED = (
    "Claude Code stream-json or session JSONL, Codex exec --json or session rollout JSONL, "
    "or a log of Claude Agent SDK messages written with str()"
)

_CLAUDE_STREAM_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})
_CLAUDE_SESSION_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "file-history-snapshot",
        "progress",
        "queue-operation",
        "ai-title",
        "custom-title",
        "last-prompt",
        "attachment",
        "permission-mode",
        "mode",
        "tag",
    }
)
_ROLLOUT_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_PY_REPR = re.compile(
    r"^(?:SystemMessage|AssistantMessage|UserMessage|ResultMessage|StreamEvent|"
    r"RateLimitEvent|TaskStartedMessage|TaskProgressMessage|TaskNotificationMessage)\("
)
_PROBE_LINES = 20  # a file whose first 20 non-empty lines hold no JSON object is not a trace
#: Names a folder scan reads by content: traces are JSON lines whatever they are called (an
#: orchestrator writes Claude's stream to ``agent_log_raw.txt``); a candidate that is not a trace
#: is reported as skipped, never dropped silently.
TRACE_FILE_SUFFIXES = (".jsonl", ".ndjson", ".txt", ".log")


def detect_format(first_line: str) -> TraceFormat | None:
    """The format a trace's first JSON line belongs to, or None when it is not one we read."""
    try:
        rec = json.loads(first_line)
    except ValueError:
        return None
    return _format_of(rec) if isinstance(rec, dict) else None


def _format_of(rec: dict[str, Any]) -> TraceFormat | None:
    rtype = rec.get("type")
    if not isinstance(rtype, str | None):
        return None  # a hostile record: not one of the known formats
    if "payload" in rec and rtype in _ROLLOUT_TYPES:
        return TraceFormat.CODEX_ROLLOUT
    if isinstance(rtype, str) and (rtype == "thread.started" or rtype.startswith(("turn.", "item."))):
        return TraceFormat.CODEX_EXEC
    if "session_id" in rec and rtype in _CLAUDE_STREAM_TYPES:
        return TraceFormat.CLAUDE_STREAM
    if "sessionId" in rec or "parentUuid" in rec or rtype in _CLAUDE_SESSION_TYPES:
        return TraceFormat.CLAUDE_SESSION
    return None


def sniff(path: Path) -> TraceFormat:
    """The format of the trace file at ``path``; raises ``InputError`` (one line) when it is not one."""
    if not path.exists():
        raise InputError(f"{path}: no such file; pass an agent trace file ({SUPPORTED})")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; pass one trace file (folders: use iter_sessions)")
    if path.name.endswith(".zst"):
        raise InputError(f"{path}: compressed rollouts are not read; decompress first (zstd -d {path.name})")
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        return _sniff_open(path, fh)


def _sniff_open(path: Path, fh: IO[str]) -> TraceFormat:
    first: tuple[int, str] | None = None
    seen = 0
    for lineno, line in enumerate(fh, 1):
        text = line.strip()
        if not text:
            continue
        first = first or (lineno, text)
        seen += 1
        try:
            rec = json.loads(text)
        except (ValueError, RecursionError):
            rec = None
        if isinstance(rec, dict):
            fmt = _format_of(rec)
            if fmt is not None:
                return fmt
            raise InputError(f"{path}: line {lineno}: {_unknown_json(rec)}")
        if seen >= _PROBE_LINES:
            break
    if first is None:
        raise InputError(f"{path}: empty file; not an agent trace ({SUPPORTED})")
    lineno, text = first
    if _PY_REPR.match(text):
        return TraceFormat.CLAUDE_SDK_REPR
    raise InputError(f"{path}: line {lineno}: not an agent trace (not JSON lines); expected {SUPPORTED}")


def _unknown_json(rec: dict[str, Any]) -> str:
    rtype = rec.get("type")
    if rtype == "init" and "session_id" in rec:
        return f"Gemini CLI stream-json is not supported; expected {SUPPORTED}"
    if "msg" in rec and "id" in rec:
        return (
            "legacy Codex protocol stream (before exec --json) is not supported; rerun with a current codex exec --json"
        )
    return f"not an agent trace (unrecognised JSON record, type {rtype!r}); expected {SUPPORTED}"


def load_trace(path: Path) -> Trace:
    """Load one trace file of any supported format (one file: a Claude session's subagent files
    are not included — use ``load_claude_session`` for those). Raises ``InputError`` for files
    that are not agent traces."""
    fmt = sniff(path)
    if fmt is TraceFormat.CLAUDE_SESSION:
        return read_claude_session_file(path)
    if fmt is TraceFormat.CODEX_ROLLOUT:
        return read_codex_rollout_file(path)
    parse = {
        TraceFormat.CLAUDE_STREAM: parse_claude_stream,
        TraceFormat.CLAUDE_SDK_REPR: parse_claude_repr,
        TraceFormat.CODEX_EXEC: parse_codex_exec,
    }[fmt]
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        trace = parse(fh)[0]
    trace.meta["path"] = str(path)
    return trace


def iter_sessions(root: Path, *, skipped: list[Path] | None = None) -> Iterator[SessionTrace]:
    """Every agent session under ``root`` (a file or a folder of any depth), one at a time.

    Candidates are the files named ``*.jsonl`` / ``.ndjson`` / ``.txt`` / ``.log``, recognised by
    content. Claude session files come with their ``<session>/subagents`` transcripts; files inside
    a ``subagents`` (or ``tool-results``) folder are never sessions of their own. Candidates that
    are not agent traces are passed over and, when ``skipped`` is given, appended to it.
    """
    if root.is_file():
        paths = [root]
    else:
        paths = [
            p
            for p in sorted(root.rglob("*"))
            if p.name.endswith(TRACE_FILE_SUFFIXES)
            and p.is_file()
            and not {"subagents", "tool-results"} & set(p.relative_to(root).parts)
        ]
    for path in paths:
        try:
            fmt = sniff(path)
        except InputError:
            if skipped is not None:
                skipped.append(path)
            continue
        if fmt is TraceFormat.CLAUDE_SESSION:
            yield load_claude_session(path)
        else:
            trace = load_trace(path)
            session_id = str(trace.meta.get("session_id") or path.stem)
            yield SessionTrace(session_id=session_id, path=path, main=trace)
