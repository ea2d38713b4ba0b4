"""Grading inputs (config, judges); the stored result of grading one task (``Grade``) is the task
record's grade, defined with it in ``knowmeter.store``."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from knowmeter import defaults
from knowmeter.executors import Executor
from knowmeter.store import (
    AssertionResult,
    DimensionOutcome,
    Grade,
    JudgeOutcome,
    Layers,
    OutputCut,
)

__all__ = [
    "AssertionResult",
    "DimensionOutcome",
    "Grade",
    "GradingConfig",
    "JudgeOutcome",
    "JudgeSpec",
    "Layers",
    "OutputCut",
]


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
