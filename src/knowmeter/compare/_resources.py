"""What a change costs besides its score: per treatment, the paired difference from the control
in cost per task, latency and tokens, each as a mean difference and a relative change with
seeded (cluster) bootstrap intervals — a better skill that makes the agent twice as dear is a
trade-off the user must see.

Pairs are the tasks both arms finished without an error, aligned by (sample, repeat) and
resampled by sample. A value the executor did not report (cost, tokens) is unknown: its pair is
left out and counted in ``n_unknown``, never read as 0; with no known pair the figures are None.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field

from knowmeter import defaults
from knowmeter.compare._results import _Model
from knowmeter.stats import (
    BootstrapEstimate,
    FloatArray,
    announce_means,
    announce_relative_change,
    bootstrap_mean,
    paired_relative_change,
)

Resource = Literal["cost_usd", "latency_ms", "tokens"]
RESOURCES: tuple[Resource, ...] = ("cost_usd", "latency_ms", "tokens")


@dataclass(frozen=True, slots=True)
class ResourceUse:
    """What one task took: its cost, latency and tokens (input + output), None when unknown."""

    sample_id: str
    repeat: int
    variant: str
    ok: bool
    cost_usd: float | None
    latency_ms: float | None
    tokens: float | None

    def value(self, resource: Resource) -> float | None:
        v: float | None = getattr(self, resource)
        return v if v is not None and math.isfinite(v) else None


class ResourceDiff(_Model):
    """One resource of one pair of variants (treatment − control, paired)."""

    resource: Resource
    n_pairs: int = Field(ge=0, description="Pairs with the value known in both arms.")
    n_unknown: int = Field(ge=0, description="Pairs (both tasks finished) left out because either value is unknown.")
    control_mean: float | None
    treatment_mean: float | None
    difference: BootstrapEstimate = Field(description="Mean paired difference, in the unit.")
    relative: BootstrapEstimate = Field(
        description="Relative change mean(treatment) / mean(control) − 1 (0.38 = +38%); None when the control's "
        "mean is 0 or unknown."
    )


class ResourceComparison(_Model):
    """A treatment's paired cost, latency and tokens against the control."""

    control: str
    treatment: str
    resources: list[ResourceDiff]


def compare_resources(
    uses: Iterable[ResourceUse],
    *,
    control: str,
    treatments: Sequence[str],
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = 0,
    level: float = defaults.CI_LEVEL,
) -> list[ResourceComparison]:
    """Every treatment's paired cost, latency and tokens against ``control``."""
    pairs = ResourcePairs.build(uses, control=control, treatments=treatments)
    pairs.announce(b=b, seed=seed)
    return pairs.compare(b=b, seed=seed, level=level)


@dataclass(frozen=True)
class _Known:
    """One resource of one treatment: the pairs with both values known."""

    resource: Resource
    control: FloatArray
    treatment: FloatArray
    samples: list[str]
    n_unknown: int


class ResourcePairs:
    """The paired values of every treatment and resource, ready to resample: ``announce`` tells a
    ``shared_resamples`` block what ``compare`` will resample, so a draw made earlier (the
    comparison's) serves them too."""

    def __init__(self, control: str, pairs: dict[str, list[_Known]]) -> None:
        self._control, self._pairs = control, pairs

    @classmethod
    def build(cls, uses: Iterable[ResourceUse], *, control: str, treatments: Sequence[str]) -> ResourcePairs:
        by_variant: dict[str, dict[tuple[str, int], ResourceUse]] = {}
        for use in uses:
            if use.ok:
                by_variant.setdefault(use.variant, {})[(use.sample_id, use.repeat)] = use
        base = by_variant.get(control, {})
        return cls(
            control,
            {name: [_known(r, base, by_variant.get(name, {})) for r in RESOURCES] for name in treatments},
        )

    def announce(self, *, b: int, seed: int) -> None:
        for known in self._pairs.values():
            for k in known:
                announce_means(k.treatment - k.control, k.samples, b=b, seed=seed)
                announce_relative_change(k.control, k.treatment, k.samples, b=b, seed=seed)

    def compare(self, *, b: int, seed: int, level: float = defaults.CI_LEVEL) -> list[ResourceComparison]:
        return [
            ResourceComparison(
                control=self._control,
                treatment=name,
                resources=[_diff(k, b=b, seed=seed, level=level) for k in known],
            )
            for name, known in self._pairs.items()
        ]


def _known(
    resource: Resource,
    control: Mapping[tuple[str, int], ResourceUse],
    treatment: Mapping[tuple[str, int], ResourceUse],
) -> _Known:
    keys = sorted(control.keys() & treatment.keys())
    known_c, known_t, samples = array("d"), array("d"), []  # the pairs with both values known
    for key in keys:
        cv, tv = control[key].value(resource), treatment[key].value(resource)
        if cv is not None and tv is not None:
            known_c.append(cv)
            known_t.append(tv)
            samples.append(key[0])
    c = np.array(known_c, dtype=np.float64)
    t = np.array(known_t, dtype=np.float64)
    return _Known(resource, c, t, samples, len(keys) - len(samples))


def _diff(known: _Known, *, b: int, seed: int, level: float) -> ResourceDiff:
    c, t, samples = known.control, known.treatment, known.samples
    diff = bootstrap_mean(t - c, samples, b=b, seed=seed, level=level)
    rel = paired_relative_change(c, t, samples, b=b, seed=seed, level=level)
    return ResourceDiff(
        resource=known.resource,
        n_pairs=len(samples),
        n_unknown=known.n_unknown,
        control_mean=float(c.mean()) if c.size else None,
        treatment_mean=float(t.mean()) if t.size else None,
        difference=BootstrapEstimate.from_result(diff, n_non_finite=0),
        relative=BootstrapEstimate.from_result(rel, n_non_finite=0),
    )
