"""Trace IR and adapters that turn real agent output into it."""

from knowmeter.traces._claude_session import (
    ClaudeSessionReader,
    claude_session_files,
    iter_claude_sessions,
    load_claude_session,
    parse_claude_session,
)
from knowmeter.traces._claude_stream import parse_claude_stream
from knowmeter.traces._codex_exec import parse_codex_exec
from knowmeter.traces._codex_rollout import iter_codex_sessions, merge_codex, parse_codex_rollout
from knowmeter.traces._common import (
    USAGE_KEYS,
    RunSummary,
    SessionTrace,
    Usage,
    add_usage,
    empty_usage,
    loads_line,
    make_usage,
    read_lines,
    usage_from,
)
from knowmeter.traces._detect import (
    TRACE_FILE_SUFFIXES,
    TraceFormat,
    detect_format,
    iter_sessions,
    load_trace,
    sniff,
)
from knowmeter.traces._ir import (
    ErrorKind,
    Event,
    MessageEvent,
    ToolCallEvent,
    ToolInvocation,
    ToolResultEvent,
    ToolStatus,
    Trace,
    event_from_dict,
    normalise_tool_name,
    trace_from_dict,
)
from knowmeter.traces._status import Outcome, classify_result

__all__ = [
    "TRACE_FILE_SUFFIXES",
    "USAGE_KEYS",
    "ClaudeSessionReader",
    "ErrorKind",
    "Event",
    "MessageEvent",
    "Outcome",
    "RunSummary",
    "SessionTrace",
    "ToolCallEvent",
    "ToolInvocation",
    "ToolResultEvent",
    "ToolStatus",
    "Trace",
    "TraceFormat",
    "Usage",
    "add_usage",
    "classify_result",
    "claude_session_files",
    "detect_format",
    "empty_usage",
    "event_from_dict",
    "iter_claude_sessions",
    "iter_codex_sessions",
    "iter_sessions",
    "load_claude_session",
    "load_trace",
    "loads_line",
    "make_usage",
    "merge_codex",
    "normalise_tool_name",
    "parse_claude_session",
    "parse_claude_stream",
    "parse_codex_exec",
    "parse_codex_rollout",
    "read_lines",
    "sniff",
    "trace_from_dict",
    "usage_from",
]
