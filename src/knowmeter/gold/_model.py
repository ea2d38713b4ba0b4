"""omk gold sets: ``metadata.yaml`` (annotator, version, scale) + ``annotations.yaml`` (scores)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from knowmeter.stats import ConfidenceInterval


class GoldScale(BaseModel):
    """The score range annotations must lie in (inclusive)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: float
    max: float

    @model_validator(mode="after")
    def _ordered(self) -> GoldScale:
        if not self.min < self.max:
            raise ValueError(f"scale min ({self.min:g}) must be below max ({self.max:g})")
        return self


class GoldMetadata(BaseModel):
    """``metadata:`` of ``metadata.yaml``. Unknown keys are kept out of the way (ignored): the
    block is free-form provenance in omk."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    annotator: str = Field(min_length=1)
    annotated_at: str | None = Field(default=None, alias="annotatedAt")
    version: str | None = None
    scale: GoldScale = GoldScale(min=1, max=5)
    notes: str | None = None

    @field_validator("annotated_at", "version", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        """YAML reads an unquoted date as a date and ``version: 0.1`` as a float: keep them as text."""
        if isinstance(value, dt.date):
            return value.isoformat()
        return str(value) if isinstance(value, int | float) else value


class GoldAnnotation(BaseModel):
    """One entry of ``annotations:``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sample_id: str = Field(min_length=1)
    score: float
    reason: str | None = None


@dataclass(frozen=True)
class GoldSet:
    """A loaded, validated gold directory."""

    directory: Path
    metadata: GoldMetadata
    annotations: tuple[GoldAnnotation, ...]

    def scores(self) -> dict[str, float]:
        """Gold score by sample id."""
        return {a.sample_id: a.score for a in self.annotations}


class GoldComparison(BaseModel):
    """How a run's judge scores agree with a gold set.

    ``judge`` per sample is the mean judge-layer score over the sample's repeats. α (interval and
    ordinal) and Pearson use those scores as they are; quadratic-weighted κ needs categories, so
    judge scores are rounded half up to the nearest integer first. ``alpha_ci_*`` resample
    samples (seeded). ``agreement`` reads the interval α with Krippendorff's cut-offs (>= 0.8
    strong, >= 0.667 acceptable, >= 0.4 weak, else poor).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    annotator: str
    judges: list[str]
    scale_min: float
    scale_max: float
    n_gold: int
    n_judged: int
    n_matched: int
    missing_in_run: list[str]
    not_in_gold: int
    alpha_interval: float | None
    alpha_ordinal: float | None
    alpha_ci_percentile: ConfidenceInterval
    alpha_ci_bca: ConfidenceInterval
    kappa_quadratic: float | None
    pearson: float | None
    mean_abs_diff: float | None
    agreement: Literal["strong", "acceptable", "weak", "poor"] | None
    contamination_warning: str | None
