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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
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
IntArray = npt.NDArray[np.int64]


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
    table = ResourceTable()
    for use in uses:
        if use.ok:
            table.add(use.sample_id, use.repeat, use.variant, (use.cost_usd, use.latency_ms, use.tokens))
    pairs = table.pairs(control=control, treatments=treatments)
    pairs.announce(b=b, seed=seed)
    return pairs.compare(b=b, seed=seed, level=level)


class ResourceTable:
    """What finished tasks took, as columns: a code per sample id (kept once each), the repeat,
    a code per variant, and cost, latency and tokens (unknown: NaN) — about 48 bytes a task."""

    def __init__(self) -> None:
        self._sample_codes: dict[str, int] = {}
        self._variant_codes: dict[str, int] = {}
        self._samples: array[int] = array("q")
        self._repeats: array[int] = array("q")
        self._variants: array[int] = array("q")
        self._values: array[float] = array("d")  # cost, latency, tokens of each task in turn

    def add(self, sample: str, repeat: int, variant: str, values: tuple[float | None, ...]) -> None:
        """One finished task (a later task with the same sample, repeat and variant replaces it)."""
        self._samples.append(self._sample_codes.setdefault(sample, len(self._sample_codes)))
        self._repeats.append(repeat)
        self._variants.append(self._variant_codes.setdefault(variant, len(self._variant_codes)))
        for value in values:
            self._values.append(math.nan if value is None or not math.isfinite(value) else value)

    def pairs(self, *, control: str, treatments: Sequence[str]) -> ResourcePairs:
        """Each treatment's tasks paired with the control's by (sample, repeat), in that order."""
        names = sorted(self._sample_codes)
        rank = np.empty(len(names), dtype=np.int64)  # a sample code's place in sorted sample ids
        rank[[self._sample_codes[n] for n in names]] = np.arange(len(names))
        samples = np.frombuffer(self._samples, dtype=np.int64)
        repeats = np.frombuffer(self._repeats, dtype=np.int64)
        key = rank[samples] * (int(repeats.max(initial=0)) + 1) + repeats
        variants = np.frombuffer(self._variants, dtype=np.int64)
        values = np.frombuffer(self._values, dtype=np.float64).reshape(-1, len(RESOURCES))

        def rows(variant: str) -> tuple[IntArray, IntArray]:
            """The variant's keys, sorted, and its row of each (the last one of a repeated key)."""
            mine = np.flatnonzero(variants == self._variant_codes.get(variant, -1))[::-1]
            keys, first = np.unique(key[mine], return_index=True)
            return keys, mine[first]

        base_keys, base_rows = rows(control)
        known: dict[str, list[_Known]] = {}
        for name in treatments:
            keys, treated = rows(name)
            _, i, j = np.intersect1d(base_keys, keys, assume_unique=True, return_indices=True)
            c_rows, t_rows = base_rows[i], treated[j]
            clusters = rank[samples[c_rows]]
            known[name] = [
                _known(resource, values[c_rows, r], values[t_rows, r], clusters) for r, resource in enumerate(RESOURCES)
            ]
        return ResourcePairs(control, known)


@dataclass(frozen=True)
class _Known:
    """One resource of one treatment: the pairs with both values known, and their clusters (the
    sample's place in sorted sample ids: the same resamples as the ids themselves)."""

    resource: Resource
    control: FloatArray
    treatment: FloatArray
    samples: IntArray
    n_unknown: int


def _known(resource: Resource, c: FloatArray, t: FloatArray, clusters: IntArray) -> _Known:
    both = np.isfinite(c) & np.isfinite(t)
    return _Known(resource, c[both], t[both], clusters[both], int(both.size - both.sum()))


class ResourcePairs:
    """The paired values of every treatment and resource, ready to resample: ``announce`` tells a
    ``shared_resamples`` block what ``compare`` will resample, so a draw made earlier (the
    comparison's) serves them too."""

    def __init__(self, control: str, pairs: dict[str, list[_Known]]) -> None:
        self._control, self._pairs = control, pairs

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


def _diff(known: _Known, *, b: int, seed: int, level: float) -> ResourceDiff:
    c, t, samples = known.control, known.treatment, known.samples
    diff = bootstrap_mean(t - c, samples, b=b, seed=seed, level=level)
    rel = paired_relative_change(c, t, samples, b=b, seed=seed, level=level)
    return ResourceDiff(
        resource=known.resource,
        n_pairs=int(samples.size),
        n_unknown=known.n_unknown,
        control_mean=float(c.mean()) if c.size else None,
        treatment_mean=float(t.mean()) if t.size else None,
        difference=BootstrapEstimate.from_result(diff, n_non_finite=0),
        relative=BootstrapEstimate.from_result(rel, n_non_finite=0),
    )
