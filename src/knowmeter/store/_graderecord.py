"""The grade of one task as stored with its record (``TaskRecord.grade``): produced by
``knowmeter.grading.grade`` and read back by the report as the same type, so a field renamed at
the producer is renamed for every reader (and an older stored line that still has the old name
fails to read, in the tests' fixture runs)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, GetPydanticSchema, JsonValue
from pydantic_core import CoreSchema, core_schema

from knowmeter import defaults

#: A score on the 1–5 scale every layer, composite and judge uses.
Score = Annotated[float, Field(ge=1, le=5, allow_inf_nan=False)]
#: A cost, latency or count: finite and never negative.
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _object_of_anything(_: Any, __: GetCoreSchemaHandler) -> CoreSchema:
    return core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())


#: A free JSON object (an assertion's details, an executor's trace metadata, a trace event): JSON
#: to its readers; checked to be an object, its values taken and written as they are (checking
#: and writing them as ``JsonValue`` costs microseconds a task — bench/bench_runner.py)
FreeObject = Annotated[dict[str, JsonValue], GetPydanticSchema(_object_of_anything)]


def _none(value: object) -> bool:
    return value is None


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AssertionResult(_Stored):
    """One assertion's outcome. ``passed`` is None when it could not be evaluated (``message``
    says why); such an assertion counts in no layer."""

    type: str
    layer: Literal["fact", "behavior"]
    weight: Amount
    passed: bool | None
    negated: bool = False
    message: str = ""
    description: str | None = Field(default=None, exclude_if=_none)
    details: FreeObject | None = Field(default=None, exclude_if=_none)

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``description`` and ``details`` only when set."""
        return self.model_dump(mode="json")


class DimensionOutcome(_Stored):
    """One rubric dimension as scored by one judge (over the repeats)."""

    scores: list[int] = Field(default_factory=list)
    mean: float | None = None
    sd: float | None = None
    failures: int = 0
    reasoning: str | None = None
    reason: str | None = None


class JudgeOutcome(_Stored):
    """What one judge gave one task. ``scores`` are the successful repeats (in dimension mode, the
    mean over dimensions of each repeat in which every dimension was scored); ``mean`` is None
    when no repeat succeeded (``error`` says why), ``sd`` when fewer than two did. ``error`` holds
    the first failure reason whenever ``failures > 0``. ``cost_usd`` is None when any call's cost
    was not reported."""

    judge: str
    model: str | None = None
    prompt_hash: str
    scores: list[float] = Field(default_factory=list)
    mean: Score | None = None
    sd: float | None = None
    failures: int = 0
    reasoning: str | None = None
    reason: str | None = None
    dimensions: dict[str, DimensionOutcome] | None = Field(default=None, exclude_if=_none)
    cost_usd: Amount | None = None
    error: str | None = None


class Layers(_Stored):
    """The layer scores of one task (None: the layer was not scored)."""

    fact: Score | None = None
    behavior: Score | None = None
    judge: Score | None = None

    def get(self, layer: str) -> float | None:
        """The score of ``layer`` (a name of ``knowmeter.defaults.LAYERS``)."""
        value: float | None = getattr(self, layer)
        return value


class OutputCut(_Stored):
    """An output graded in part: ``length`` characters, the first ``graded`` of them graded."""

    length: int
    graded: int


class Grade(_Stored):
    """Everything grading found for one task.

    ``passed``: every evaluated assertion passed (None when none was evaluated).
    ``judge_error``: why the judge layer is missing although judges were configured.
    ``judge_cost_usd``: all judge calls for this task (panel and judge-backed assertions); None
    when any call's cost is unknown.
    """

    assertions: list[AssertionResult] = Field(default_factory=list)
    layers: Layers = Field(default_factory=Layers)
    composite: Score | None = None
    layers_used: list[defaults.LayerName] = Field(default_factory=list)
    passed: bool | None = None
    judges: list[JudgeOutcome] = Field(default_factory=list)
    judge_error: str | None = None
    judge_cost_usd: Amount | None = 0.0
    #: set when the output was longer than ``GradingConfig.max_output_chars``: its length and how
    #: many of its first characters the assertions and judges saw
    output_truncated: OutputCut | None = Field(default=None, exclude_if=_none)

    def to_dict(self) -> dict[str, Any]:
        """JSON form; optional keys (``details``, ``description``, ``dimensions``,
        ``output_truncated``) only when set."""
        return self.model_dump(mode="json")
