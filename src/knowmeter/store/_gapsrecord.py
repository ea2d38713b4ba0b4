"""A task's gap analysis as stored with its record (``AnalysisRecord.gaps``): the JSON form of
``knowmeter.analysis.TaskGaps``, typed key by key. The post-processing builds it field by field
from the ``TaskGaps`` it found (``knowmeter.postprocess.stored_gaps``), so a field renamed on
either side fails mypy; it is read back checked (a key it does not know, a wrong type or a count
below its bound is one line naming the task and field) and stays the dict the line held, so a
line written by an earlier version reads back exactly as stored."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

#: a key a stored gap analysis does not know is an error naming it
_CLOSED = ConfigDict(extra="forbid")
#: A count: a whole number, at least 0.
_Count = Annotated[int, Field(ge=0)]
_Source = Literal["failed_search", "explicit_marker", "hedging", "repeated_failure", "retried_command"]


@with_config(_CLOSED)
class VerdictRecord(TypedDict):
    """The hedging classifier's decision on a signal (``HedgingVerdict``)."""

    is_uncertainty: bool
    confidence: Annotated[float, Field(ge=0, le=1)]
    reason: NotRequired[str]
    origin: NotRequired[Literal["llm", "cache", "fallback-error", "fallback-cap"]]


@with_config(_CLOSED)
class SignalRecord(TypedDict):
    """One gap signal (``GapSignal``); keys that were None are not stored."""

    sample_id: str
    repeat: NotRequired[_Count]
    turn: NotRequired[_Count]
    source: _Source
    weight: NotRequired[Annotated[float, Field(ge=0)]]
    tool: NotRequired[str]
    target: NotRequired[str]
    context: NotRequired[str]
    occurrences: NotRequired[Annotated[int, Field(ge=1)]]
    note: NotRequired[str]
    window: NotRequired[str]
    classifier_verdict: NotRequired[VerdictRecord]
    calls: NotRequired[list[str]]


@with_config(_CLOSED)
class GapsRecord(TypedDict):
    """One task's gap analysis (``TaskGaps``); keys added since a line was written are absent
    from it and read back absent."""

    sample_id: str
    repeat: NotRequired[_Count]
    ok: NotRequired[bool]
    signals: NotRequired[list[SignalRecord]]
    hedging_mode: NotRequired[Literal["regex-only", "regex+llm"]]
    hedging_dropped: NotRequired[_Count]
    excluded: NotRequired[dict[str, _Count]]
    retried: NotRequired[list[SignalRecord]]
    hedging_unjudged: NotRequired[_Count]
