"""The activation report (``activation.json`` in the run's folder): typed pydantic models with a
published JSON Schema (``activation.schema.json`` beside this module, ``knowmeter docs --schema
activation``; regenerate with ``python -m knowmeter.activation._model``). Unknown figures are None."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SCHEMA_VERSION",
    "ActivationReport",
    "ArmFigures",
    "CaseSet",
    "Comparison",
    "ConfusedCase",
    "PairedChange",
    "Rate",
    "schema_path",
]

SCHEMA_VERSION = 1
ActivationVerdict = Literal["PROGRESS", "REGRESS", "NOISE", "UNDERPOWERED", "SOLO", "NOT MEASURED"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Rate(_Model):
    """``successes`` of ``trials`` over ``cases`` (clusters) with the clustered Wilson interval;
    ``design_effect`` ≥ 1 is how much the repeats of a case shrank the effective n."""

    successes: int
    trials: int
    cases: int
    rate: float | None
    low: float | None
    high: float | None
    design_effect: float | None


class ConfusedCase(_Model):
    """A case the agent got wrong at least once — fired when it should not, did not when it
    should, or (routing) loaded another skill first — or whose task failed."""

    case_id: str
    should_trigger: bool
    activated: int
    trials: int
    errors: int
    #: how the skill was loaded when it was (skill-tool, read, both)
    how: list[str]
    #: other installed skills that were loaded in this case
    loaded_instead: list[str]
    expected_winner: str | None = None
    #: routing cases: trials whose first loaded skill was not the expected winner
    top1_misses: int | None = None


class ArmFigures(_Model):
    """The activation figures of one arm (one version of the skill)."""

    arm: str
    skill: str
    cases: int
    trials: int
    errors: int
    recall: Rate
    false_activation_rate: Rate
    precision: Rate
    f1: float | None
    f1_low: float | None
    f1_high: float | None
    routing_top1: Rate | None
    confusion: list[ConfusedCase]
    level: float
    b: int
    seed: int


class PairedChange(_Model):
    """treatment − control of one rate over pairs (case, repeat): the cluster bootstrap of the
    mean paired difference (clusters = cases) and McNemar's exact test on the discordant pairs."""

    measure: Literal["recall", "false_activation_rate"]
    pairs: int
    cases: int
    difference: float | None
    low: float | None
    high: float | None
    control_only: int
    treatment_only: int
    mcnemar_p: float | None
    significant: bool


class Comparison(_Model):
    """The A/B of two versions of the skill on one part of the cases (``all``, ``tune`` or
    ``held-out``)."""

    part: Literal["all", "tune", "held-out"]
    control: ArmFigures
    treatment: ArmFigures
    changes: list[PairedChange]


class CaseSet(_Model):
    """The cases every figure depends on: their files, count and content hash (the watermark)."""

    paths: list[str]
    count: int
    sha256: str


class ActivationReport(_Model):
    """Everything an activation run measured, and its verdict."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    created_at: str | None = None
    skill: str
    case_set: CaseSet
    case_files: list[dict[str, str]]
    cases: int
    case_ids: list[str]
    repeats: int
    counts: Literal["skill-tool", "read", "either"]
    executor: str
    model: str | None
    distractors: list[str]
    notes: list[str] = Field(default_factory=list)
    arms: list[ArmFigures]
    comparisons: list[Comparison] = Field(default_factory=list)
    split: dict[str, list[str]] | None = None
    verdict: ActivationVerdict
    reasons: list[str]
    exit_code: int


def schema_path() -> Path:
    """The published JSON Schema of ``activation.json`` (``ActivationReport.model_json_schema()``)."""
    return Path(__file__).with_name("activation.schema.json")


if __name__ == "__main__":
    from knowmeter.schemas import as_text

    schema_path().write_text(as_text(ActivationReport.model_json_schema()), encoding="utf-8")
