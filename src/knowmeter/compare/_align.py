"""Indexing observations by (sample, repeat) and aligning two arms into pairs, counting every drop."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from knowmeter.compare._inputs import METRICS, Observation
from knowmeter.compare._results import DropCounts
from knowmeter.stats import FloatArray

Key = tuple[str, int]


@dataclass(frozen=True)
class Arm:
    """One variant's observations keyed by (sample_id, repeat); a later duplicate replaces an
    earlier one and is counted."""

    variant: str
    by_key: dict[Key, Observation]
    duplicates: int

    @classmethod
    def build(cls, variant: str, observations: Iterable[Observation]) -> Arm:
        by_key: dict[Key, Observation] = {}
        duplicates = 0
        for obs in observations:
            if obs.variant != variant:
                continue
            key = (obs.sample_id, obs.repeat)
            duplicates += key in by_key
            by_key[key] = obs
        return cls(variant, dict(sorted(by_key.items())), duplicates)

    @property
    def scored(self) -> list[Observation]:
        """Observations that did not error."""
        return [o for o in self.by_key.values() if o.ok]


def value(obs: Observation, metric: str) -> float:
    """The metric as a float; NaN when absent (callers distinguish absent from non-finite)."""
    v = obs.score(metric)
    return math.nan if v is None else float(v)


@dataclass
class PairedMetric:
    """The pairs of one metric: aligned keys, both arms' values, and what was dropped."""

    metric: str
    keys: list[Key] = field(default_factory=list)
    control: list[float] = field(default_factory=list)
    treatment: list[float] = field(default_factory=list)
    drops: dict[str, int] = field(default_factory=dict)

    def drop(self, reason: str) -> None:
        self.drops[reason] = self.drops.get(reason, 0) + 1

    def drop_counts(self) -> DropCounts:
        return DropCounts(**self.drops)

    def samples(self) -> list[str]:
        return [k[0] for k in self.keys]

    def arrays(self) -> tuple[FloatArray, FloatArray]:
        return np.asarray(self.control, dtype=np.float64), np.asarray(self.treatment, dtype=np.float64)


def _drop_reason(c: Observation | None, t: Observation | None, metric: str) -> str | None:
    if c is None:
        return "missing_control"
    if t is None:
        return "missing_treatment"
    if not (c.ok and t.ok):
        return "error"
    cv, tv = c.score(metric), t.score(metric)
    if cv is None or tv is None:
        return "absent"
    if not (math.isfinite(cv) and math.isfinite(tv)):
        return "non_finite"
    if metric == "composite" and c.layer_set != t.layer_set:
        return "layer_mismatch"
    return None


def align(control: Arm, treatment: Arm, metrics: Sequence[str] = METRICS) -> dict[str, PairedMetric]:
    """Pairs per metric over the union of both arms' keys (sorted by sample, then repeat)."""
    keys = sorted(set(control.by_key) | set(treatment.by_key))
    paired = {m: PairedMetric(m) for m in metrics}
    for key in keys:
        c, t = control.by_key.get(key), treatment.by_key.get(key)
        for metric, pm in paired.items():
            reason = _drop_reason(c, t, metric)
            if reason is not None:
                pm.drop(reason)
                continue
            assert c is not None and t is not None
            pm.keys.append(key)
            pm.control.append(value(c, metric))
            pm.treatment.append(value(t, metric))
    return paired


def passed_pairs(control: Arm, treatment: Arm) -> list[tuple[bool, bool]]:
    """``(control.passed, treatment.passed)`` where both ran without error and have assertions."""
    pairs = []
    for key, c in control.by_key.items():
        t = treatment.by_key.get(key)
        if t is not None and c.ok and t.ok and c.passed is not None and t.passed is not None:
            pairs.append((c.passed, t.passed))
    return pairs


def ok_pairs(control: Arm, treatment: Arm) -> list[tuple[bool, bool]]:
    """``(control.ok, treatment.ok)`` for every (sample, repeat) both arms ran."""
    return [(c.ok, t.ok) for key, c in control.by_key.items() if (t := treatment.by_key.get(key)) is not None]


def cluster_means(samples: Sequence[str], values: FloatArray) -> FloatArray:
    """Mean of ``values`` within each sample (samples in sorted order)."""
    if not samples:
        return np.empty(0)
    _, codes = np.unique(np.asarray(samples), return_inverse=True)
    sums = np.bincount(codes, weights=values)
    counts = np.bincount(codes)
    return np.asarray(sums / counts, dtype=np.float64)
