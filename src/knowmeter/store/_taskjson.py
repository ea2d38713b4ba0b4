"""A task record's stored JSON, for the readers that take it as stored rather than as a
``TaskRecord``: the page's and ``knowmeter show``'s task views (validating every record shown
into models doubled the page's cost a view) and the gold comparison (which also reads minimal
results files). Their keys are typed here, so mypy checks every key such a reader names; each
``TypedDict`` has exactly the fields of the model it mirrors (tests/store/test_task_json.py), so
a field renamed on either side fails a check. ``total=False``: a reader of stored JSON must
allow for a key an older line did not have."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from knowmeter.store._gapsrecord import GapsRecord

#: A part of a record that is free as stored (an assertion's details, a trace's metadata and
#: events, a comprehension or activation block as carried here).
Free = dict[str, Any]


class LayersJSON(TypedDict, total=False):
    """``Layers``: each layer's score."""

    fact: float | None
    behavior: float | None
    judge: float | None


class AssertionJSON(TypedDict, total=False):
    """``AssertionResult``."""

    type: str
    layer: str
    weight: float
    passed: bool | None
    negated: bool
    message: str
    description: str | None
    details: Free | None


class DimensionJSON(TypedDict, total=False):
    """``DimensionOutcome``."""

    scores: list[int]
    mean: float | None
    sd: float | None
    failures: int
    reasoning: str | None
    reason: str | None


class JudgeJSON(TypedDict, total=False):
    """``JudgeOutcome``."""

    judge: str
    model: str | None
    prompt_hash: str
    scores: list[float]
    mean: float | None
    sd: float | None
    failures: int
    reasoning: str | None
    reason: str | None
    dimensions: dict[str, DimensionJSON] | None
    cost_usd: float | None
    error: str | None


class OutputCutJSON(TypedDict, total=False):
    """``OutputCut``."""

    length: int
    graded: int


class GradeJSON(TypedDict, total=False):
    """``Grade``."""

    assertions: list[AssertionJSON]
    layers: LayersJSON
    composite: float | None
    layers_used: list[str]
    passed: bool | None
    judges: list[JudgeJSON]
    judge_error: str | None
    judge_cost_usd: float | None
    output_truncated: OutputCutJSON | None


class TraceJSON(TypedDict, total=False):
    """``TraceRecord``: its metadata and events are free."""

    source: str
    meta: Free
    events: list[Free]


class ExecJSON(TypedDict, total=False):
    """``ExecRecord``."""

    output: str
    usage: dict[str, int | None] | None
    cost_usd: float | None
    latency_ms: float | None
    duration_api_ms: float | None
    num_turns: int | None
    error: str | None
    timed_out: bool
    trace: TraceJSON | None


class AnalysisJSON(TypedDict, total=False):
    """``AnalysisRecord``."""

    gaps: GapsRecord | None
    access: dict[str, int] | None


class TaskJSON(TypedDict, total=False):
    """``TaskRecord``: one line of results.jsonl. A comprehension or activation run's block is
    read as a ``TaskRecord`` by its own readers; here it is only carried."""

    task_id: str
    sample_id: str
    variant: str
    role: str
    repeat: int
    attempts: int
    cached: bool
    started_at: str
    finished_at: str
    prompt: str | None
    exec: ExecJSON
    grade: GradeJSON | None
    analysis: AnalysisJSON | None
    comprehension: Free | None
    activation: Free | None
