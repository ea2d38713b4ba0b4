"""Grading inputs (config, judges) and the stored result of grading one task (``Grade``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from knowmeter import defaults
from knowmeter.executors import Executor


class GradingConfig(BaseModel):
    """Run-wide grading settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: keep the judge prompt's length-debias instruction (``--no-length-debias`` turns it off)
    length_debias: bool = defaults.LENGTH_DEBIAS
    #: judge calls per judge, dimension and task (``--judge-repeat``): mean, SD and failures
    judge_repeat: int = Field(default=defaults.JUDGE_REPEAT, ge=1, le=50)
    #: judge calls in flight at once for one task
    judge_concurrency: int = Field(default=4, ge=1, le=64)
    #: per-call timeout passed to the judge executor (None: the executor's default)
    judge_timeout_s: float | None = Field(default=None, gt=0)
    #: wall-clock limit of one ``custom`` assertion's subprocess (an assertion may override it)
    custom_timeout_s: float = Field(default=30.0, gt=0)
    #: interpreter for ``custom`` assertions (None: the one running knowmeter)
    custom_python: str | None = None
    #: longer outputs are graded and judged on their first this-many characters
    max_output_chars: int = Field(default=defaults.MAX_GRADED_OUTPUT_CHARS, ge=1)


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """A judge: any executor plus a model. ``name`` identifies it in results, e.g.
    ``"claude:opus"`` as given to ``--judge``."""

    name: str
    executor: Executor
    model: str | None = None


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AssertionResult(_Stored):
    """One assertion's outcome. ``passed`` is None when it could not be evaluated (``message``
    says why); such an assertion counts in no layer."""

    type: str
    layer: Literal["fact", "behavior"]
    weight: float
    passed: bool | None
    negated: bool = False
    message: str = ""
    description: str | None = None
    details: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``description`` and ``details`` only when set."""
        d = self.model_dump(mode="json")
        _drop_none(d, "details", "description")
        return d


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
    mean: float | None = None
    sd: float | None = None
    failures: int = 0
    reasoning: str | None = None
    reason: str | None = None
    dimensions: dict[str, DimensionOutcome] | None = None
    cost_usd: float | None = None
    error: str | None = None


class Layers(_Stored):
    fact: float | None = None
    behavior: float | None = None
    judge: float | None = None


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
    composite: float | None = None
    layers_used: list[defaults.LayerName] = Field(default_factory=list)
    passed: bool | None = None
    judges: list[JudgeOutcome] = Field(default_factory=list)
    judge_error: str | None = None
    judge_cost_usd: float | None = 0.0
    #: set when the output was longer than ``GradingConfig.max_output_chars``: its length and how
    #: many of its first characters the assertions and judges saw
    output_truncated: OutputCut | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form; optional keys (``details``, ``description``, ``dimensions``,
        ``output_truncated``) only when set."""
        d = self.model_dump(mode="json", exclude={"assertions"})
        d["assertions"] = [a.to_dict() for a in self.assertions]
        for j in d["judges"]:
            _drop_none(j, "dimensions")
        _drop_none(d, "output_truncated")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Grade:
        return cls.model_validate(d)


def _drop_none(d: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if d.get(key) is None:
            d.pop(key, None)
