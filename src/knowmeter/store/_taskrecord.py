"""The shape of one stored task (a line of ``results.jsonl``): the exec result with its trace,
the grade and the analysis. The fields readers rely on are typed; the rest is free (a trace's
events, an executor's extras). Every record is checked against it when a run is read back."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


#: A score on the 1–5 scale every layer, composite and judge uses.
Score = Annotated[float, Field(ge=1, le=5, allow_inf_nan=False)]
#: A cost, latency or count: finite and never negative.
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class WarningRecord(_Open):
    """A warning an executor recorded with the trace (counted per kind in the operations summary)."""

    kind: str | None = None
    message: str | None = None


class TraceMetaRecord(_Open):
    """A trace's metadata: what the report reads of it is typed."""

    warnings: list[WarningRecord] | None = None
    artifact_delivery: str | None = Field(
        default=None, description="How the executor delivered the artifact (absent: as the system text)."
    )
    skill_folder: str | None = Field(default=None, description="The folder the skill was installed under.")
    memory_delivered: list[str] | None = Field(default=None, description="Memory files delivered with the task.")


class TraceRecord(_Open):
    """A trace as stored: its events stay free; its metadata is a mapping the readers look into."""

    meta: TraceMetaRecord | None = None


class ExecRecord(_Open):
    """What the agent run gave (the fields the report reads are typed; the rest is free)."""

    error: str | None = None
    trace: TraceRecord | None = None
    timed_out: bool = False
    cost_usd: Amount | None = None
    latency_ms: Amount | None = None
    usage: dict[str, Annotated[int, Field(ge=0)] | None] | None = None


class AssertionRecord(_Open):
    """One assertion's outcome; ``passed`` None when it could not be decided."""

    passed: bool | None = None
    weight: Amount = 1.0
    message: str | None = None
    details: dict[str, Any] | None = None


class JudgeRecord(_Open):
    """One judge's scores of the answer."""

    judge: str
    mean: Score | None = None
    model: str | None = None


class GradeRecord(_Open):
    """The grade of one task: per-layer scores, composite, assertions and judges."""

    layers: dict[str, Score | None] = Field(default_factory=dict)
    composite: Score | None = None
    layers_used: list[str] = Field(default_factory=list)
    passed: bool | None = None
    assertions: list[AssertionRecord] = Field(default_factory=list)
    judges: list[JudgeRecord] = Field(default_factory=list)
    judge_error: str | None = None
    output_truncated: dict[str, Any] | None = Field(default=None, description="What of the output was cut for grading.")


class AnalysisRecord(_Open):
    """A task's analysis: gap signals (checked by the gaps section) and file accesses."""

    gaps: dict[str, Any] | None = None
    access: dict[str, Annotated[int, Field(ge=0)]] | None = None


class TaskRecord(BaseModel):
    """One finished task as stored in results.jsonl (exec result with trace, grade, analysis).

    Written back exactly as stored (``stored()``): defaults of fields the line did not have are
    not added."""

    model_config = ConfigDict(extra="allow")

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
    grade: GradeRecord | None = None
    analysis: AnalysisRecord | None = None
    comprehension: dict[str, Any] | None = Field(
        default=None, description="A comprehension run's grading of this answer (knowmeter comprehend)."
    )

    def stored(self) -> dict[str, Any]:
        """The JSON form, as it was stored."""
        return self.model_dump(mode="json", exclude_unset=True)


def task_id(sample_id: str, variant: str, repeat: int) -> str:
    """Deterministic task id: the same sample, variant and repeat always get the same id. The id
    is unambiguous because neither name may hold ``::`` or start or end with ``:``
    (``knowmeter.samples.id_name_problem``): two different tasks never share an id."""
    return f"{sample_id}::{variant}::r{repeat}"
