"""What the comparison consumes: one scored observation per task, and the decision settings."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowmeter import defaults

#: Score layers in canonical order, and the metrics compared (the composite first).
METRICS: tuple[str, ...] = ("composite", *defaults.LAYERS)
_METRIC_KEYS = frozenset(METRICS)
#: Every layer list already in canonical order (each subset of the layers, in their order).
_CANONICAL = frozenset(
    tuple(layer for i, layer in enumerate(defaults.LAYERS) if mask >> i & 1)
    for mask in range(2 ** len(defaults.LAYERS))
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Observation:
    """One graded task: a sample under a variant at one repeat index.

    ``scores`` maps ``composite`` / ``fact`` / ``behavior`` / ``judge`` to a 1–5 score, ``None``
    (or a missing key) when that layer is absent for the task. ``ok`` is False when the task
    errored. ``passed`` says whether every assertion passed (None: no assertions).
    ``judge_scores`` holds each judge's score by judge name (None: that judge failed), for
    inter-judge agreement. ``layers_used`` names the layers the composite was computed from; when
    empty it is taken to be the layers with a score.

    A slotted dataclass, checked on creation (``ValueError``): a run holds one per task while it
    is compared, so it stays small (about a tenth of a pydantic model's size); its mappings are
    never changed, so equal ones may be shared between observations.
    """

    sample_id: str
    repeat: int = 0
    variant: str
    ok: bool = True
    scores: Mapping[str, float | None] = field(default_factory=dict)
    passed: bool | None = None
    judge_scores: Mapping[str, float | None] = field(default_factory=dict)
    layers_used: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.sample_id or not self.variant:
            raise ValueError(
                f"observation {self.sample_id!r} / {self.variant!r}: sample_id and variant must not be empty"
            )
        if self.repeat < 0:
            raise ValueError(f"observation {self.sample_id!r}: repeat must be >= 0, got {self.repeat}")
        if not self.scores.keys() <= _METRIC_KEYS:
            unknown = sorted(set(self.scores) - _METRIC_KEYS)
            raise ValueError(f"unknown score key(s) {unknown}; expected some of {list(METRICS)}")
        if self.layers_used in _CANONICAL:  # the usual case, checked at once (a run makes one per task)
            return
        unknown = sorted(set(self.layers_used) - set(defaults.LAYERS))
        if unknown:
            raise ValueError(f"unknown layer(s) {unknown}; expected some of {list(defaults.LAYERS)}")
        canonical = tuple(layer for layer in defaults.LAYERS if layer in self.layers_used)
        if canonical != self.layers_used:  # an equal tuple given is kept (callers may share one)
            object.__setattr__(self, "layers_used", canonical)

    def score(self, metric: str) -> float | None:
        """The metric's score as given (may be NaN); None when absent."""
        return self.scores.get(metric)

    @property
    def layer_set(self) -> tuple[str, ...]:
        """Layers the composite was built from, in canonical order."""
        if self.layers_used:
            return self.layers_used
        return tuple(
            layer for layer in defaults.LAYERS if (v := self.scores.get(layer)) is not None and math.isfinite(v)
        )


class CompareConfig(BaseModel):
    """Decision settings. Defaults follow the composite-score spec (§4) and the issue.

    - ``threshold``: layer gate — each present layer's treatment mean must be >= this.
    - ``min_effect``: a significant composite gain smaller than this is "trivially small".
    - ``stability_limit``: a share of the composite's variance that is run-to-run (between the
      repeats of a sample, 1 - ICC(1)) above this is reported as unstable — a warning only.
    - ``judge_dissent``: inter-judge Pearson below this (either arm) is judge dissent.
    - ``alpha``: significance level: the composite is tested first at alpha (Holm across
      treatments), then the layers (serial gatekeeping, see ``compare._pair``).
    - ``min_pairs``: fewer paired samples than this is underpowered.
    - ``max_mde``: a non-significant comparison whose minimum detectable effect (at ``power``)
      exceeds this many score points is underpowered rather than noise.
    - ``saturation_tolerance``: the last repeat narrowing the CI by less than this share means
      the CI has saturated in repeats.
    - ``sequential_alpha``: the nominal level of the sequential look a run stopped at
      (``eval --sequential``); it replaces ``alpha`` in the paired tests and ``1 − ci_level`` in
      their decision intervals. ``alpha`` still sets the McNemar failure guard and the MDE.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float = defaults.LAYER_GATE
    min_effect: float = Field(default=defaults.MIN_EFFECT, ge=0)
    stability_limit: float = Field(default=defaults.STABILITY_LIMIT, gt=0, le=1)
    judge_dissent: float = Field(default=0.4, ge=-1, le=1)
    alpha: float = Field(default=defaults.ALPHA, gt=0, lt=1)
    bootstrap_samples: int = Field(default=defaults.BOOTSTRAP_SAMPLES, ge=100)
    permutation_samples: int = Field(default=defaults.PERMUTATION_SAMPLES, ge=100)
    seed: int = Field(default=0, ge=0)
    ci_level: float = Field(default=defaults.CI_LEVEL, gt=0, lt=1)
    ci_method: Literal["bca", "percentile"] = "bca"
    min_pairs: int = Field(default=defaults.MIN_PAIRS, ge=2)
    max_mde: float = Field(default=defaults.MAX_MDE, gt=0)
    power: float = Field(default=defaults.POWER, gt=0, lt=1)
    saturation_tolerance: float = Field(default=0.1, gt=0, lt=1)
    sequential_alpha: float | None = Field(default=None, gt=0, lt=1)

    @property
    def test_alpha(self) -> float:
        """The level the paired tests are decided at."""
        return self.alpha if self.sequential_alpha is None else self.sequential_alpha

    @property
    def test_ci_level(self) -> float:
        """The level of the paired differences' intervals."""
        return self.ci_level if self.sequential_alpha is None else 1 - self.sequential_alpha

    @model_validator(mode="after")
    def _power_above_alpha(self) -> CompareConfig:
        if self.power <= self.alpha:
            raise ValueError("power must be larger than alpha")
        return self
