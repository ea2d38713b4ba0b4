"""Trace IR and adapters that turn real agent output into it."""

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

__all__ = [
    "ErrorKind",
    "Event",
    "MessageEvent",
    "ToolCallEvent",
    "ToolInvocation",
    "ToolResultEvent",
    "ToolStatus",
    "Trace",
    "event_from_dict",
    "normalise_tool_name",
    "trace_from_dict",
]
