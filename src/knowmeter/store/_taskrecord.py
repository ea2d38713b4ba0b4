"""The one type of a stored task (a line of ``results.jsonl``): ``TaskRecord``, with the exec
result and its trace, the grade (``Grade``, as grading produces it), the analysis and a
comprehension run's grading. The runner builds it, ``ResultsWriter`` writes it, the run's listener
hears it and every reader gets it back (``StoredTasks``). No model takes keys it does not know:
what is genuinely free (a trace's events, an executor's metadata, an assertion's details) is a
typed free field (``FreeObject``). Lines written by earlier versions (schema 2) have this shape
already: tests/store/fixtures holds some, read back as stored."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from knowmeter.store._comprehensionrecord import ComprehensionResult, Detection
from knowmeter.store._gapsrecord import GapsRecord
from knowmeter.store._graderecord import Amount, FreeObject, Grade
from knowmeter.store._taskjson import TaskJSON


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WarningRecord(BaseModel):
    """A warning an executor recorded with the trace (counted per kind in the operations summary)."""

    model_config = ConfigDict(extra="ignore")

    kind: str | None = None
    message: str | None = None


class TraceMetaRecord(BaseModel):
    """What the report reads of a trace's metadata (the executor's own keys beside them are not
    part of this view; they stay in ``TraceRecord.meta``)."""

    model_config = ConfigDict(extra="ignore")

    warnings: list[WarningRecord] | None = None
    artifact_delivery: str | None = Field(
        default=None, description="How the executor delivered the artifact (absent: as the system text)."
    )
    skill_folder: str | None = Field(default=None, description="The folder the skill was installed under.")
    memory_delivered: list[str] | None = Field(default=None, description="Memory files delivered with the task.")


_META = TypeAdapter(TraceMetaRecord)


class TraceRecord(_Closed):
    """A trace as stored: where it came from, its metadata (the executor's own, free; the part the
    report reads is read through ``known``, checked when the record is read: ``check_known``) and
    its events (free: ``knowmeter.traces`` reads them back)."""

    model_config = ConfigDict(extra="forbid", ignored_types=(cached_property,))

    source: str = "unknown"
    meta: FreeObject = Field(default_factory=dict)
    events: list[FreeObject] = Field(default_factory=list)

    @cached_property
    def known(self) -> TraceMetaRecord:
        """The metadata the report reads, typed."""
        return _META.validate_python(self.meta)


class ExecRecord(_Closed):
    """What the agent run gave (``knowmeter.executors.ExecResult`` as stored)."""

    output: str = ""
    usage: dict[str, Annotated[int, Field(ge=0)] | None] | None = None
    cost_usd: Amount | None = None
    latency_ms: Amount | None = None
    duration_api_ms: Amount | None = None
    num_turns: Annotated[int, Field(ge=0)] | None = None
    error: str | None = None
    timed_out: bool = False
    trace: TraceRecord | None = None


class AnalysisRecord(_Closed):
    """A task's analysis: gap signals (``knowmeter.analysis.TaskGaps`` as stored: ``GapsRecord``)
    and the files the agent read, by path."""

    gaps: GapsRecord | None = None
    access: dict[str, Annotated[int, Field(ge=0)]] | None = None


def _none(value: object) -> bool:
    return value is None


class Processed(_Closed):
    """What a run's post-processing adds to a finished task's record (all optional; ``grade`` is
    stored even when None, the others only when set)."""

    grade: Grade | None = None
    analysis: AnalysisRecord | None = Field(default=None, exclude_if=_none)
    comprehension: ComprehensionResult | None = Field(
        default=None,
        exclude_if=_none,
        description="A comprehension run's grading of this answer (knowmeter comprehend).",
    )
    activation: Detection | None = Field(
        default=None, exclude_if=_none, description="The skills an activation run's task loaded (knowmeter activation)."
    )


class _Task(_Closed):
    """Which task, how it ran and what the agent gave (the fields before ``Processed``'s)."""

    task_id: str
    sample_id: str
    variant: str
    role: str
    repeat: int = Field(ge=0)
    attempts: int = Field(ge=0)
    cached: bool
    started_at: str
    finished_at: str
    prompt: str | None = Field(
        default=None,
        description="The sample's prompt (with its context) as the task was given it; "
        "records written before it was stored have none.",
    )
    exec: ExecRecord


class TaskRecord(Processed, _Task):
    """One finished task as stored in results.jsonl (exec result with trace, grade, analysis; its
    fields in that order).

    Written as built, and back exactly as stored (``stored()``): defaults of fields the line did
    not have are not added."""

    def stored(self) -> TaskJSON:
        """The JSON form, as it was stored."""
        return cast("TaskJSON", self.model_dump(mode="json", exclude_unset=True))

    def line(self) -> bytes:
        """The JSON line of the record (without its newline), as ``results.jsonl`` stores it."""
        return self.__pydantic_serializer__.to_json(self, exclude_unset=True)


def task_id(sample_id: str, variant: str, repeat: int) -> str:
    """Deterministic task id: the same sample, variant and repeat always get the same id. The id
    is unambiguous because neither name may hold ``::`` or start or end with ``:``
    (``knowmeter.samples.id_name_problem``): two different tasks never share an id."""
    return f"{sample_id}::{variant}::r{repeat}"
