"""Binary outcomes: McNemar's exact test for paired pass/fail, Wilson interval for a pass rate
(plain, and clustered for repeated trials of one sample)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from knowmeter import defaults
from knowmeter.stats._special import binom_half_two_sided, norm_ppf


@dataclass(frozen=True)
class McNemarResult:
    """Paired pass/fail counts and the exact (binomial) McNemar p-value.

    ``control_only`` = pairs where only the control passed, ``treatment_only`` = only the
    treatment passed; the test uses these discordant pairs alone. ``p_value`` is None when
    there are no pairs at all.
    """

    both: int
    control_only: int
    treatment_only: int
    neither: int
    p_value: float | None

    @property
    def n_pairs(self) -> int:
        return self.both + self.control_only + self.treatment_only + self.neither

    @property
    def n_discordant(self) -> int:
        return self.control_only + self.treatment_only

    def to_dict(self) -> dict[str, Any]:
        return {
            "both": self.both,
            "control_only": self.control_only,
            "treatment_only": self.treatment_only,
            "neither": self.neither,
            "n_pairs": self.n_pairs,
            "n_discordant": self.n_discordant,
            "p_value": self.p_value,
        }


def mcnemar_exact(pairs: list[tuple[bool, bool]]) -> McNemarResult:
    """McNemar's exact test on ``(control_passed, treatment_passed)`` pairs: two-sided binomial
    test of the discordant pairs at p = 1/2 (``scipy.stats.binomtest(b, b + c)``)."""
    both = sum(1 for c, t in pairs if c and t)
    control_only = sum(1 for c, t in pairs if c and not t)
    treatment_only = sum(1 for c, t in pairs if t and not c)
    neither = len(pairs) - both - control_only - treatment_only
    p = binom_half_two_sided(control_only, control_only + treatment_only) if pairs else None
    return McNemarResult(both, control_only, treatment_only, neither, p)


def wilson_interval(successes: int, n: int, level: float = defaults.CI_LEVEL) -> tuple[float, float] | None:
    """Wilson score interval for a proportion; None when n = 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n ({n}), got {successes}")
    return _wilson(successes / n, n, level)


def _wilson(p: float, n: float, level: float) -> tuple[float, float]:
    """Wilson interval for an observed share ``p`` over a (possibly effective, non-integer) ``n``."""
    z = norm_ppf(1.0 - (1.0 - level) / 2.0)
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if p == 0.0 else max(0.0, centre - half)
    high = 1.0 if p == 1.0 else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class ClusteredWilson:
    """A pass rate over clusters of trials (the repeats of a sample) with a Wilson interval on the
    effective sample size ``n / design_effect`` (Korn & Graubard 1998).

    ``design_effect`` = cluster-robust variance of the share / its variance under independence,
    floored at 1. ``low`` / ``high`` are None when the variance cannot be estimated (a single
    cluster holding several trials)."""

    successes: int
    n: int
    n_clusters: int
    rate: float
    low: float | None
    high: float | None
    design_effect: float | None
    effective_n: float | None


def wilson_clustered(
    successes: npt.ArrayLike, trials: npt.ArrayLike, level: float = defaults.CI_LEVEL
) -> ClusteredWilson | None:
    """Wilson interval of ``sum(successes) / sum(trials)`` where cluster ``i`` had ``trials[i]``
    trials and ``successes[i]`` successes; None without any trial.

    The variance of the share is the with-replacement cluster (sandwich, CR1) estimate
    ``G/(G-1) · Σ (y_i - p·m_i)² / N²``; with one trial per cluster (no repeats) the plain Wilson
    interval is returned (design effect 1)."""
    y = np.asarray(successes, dtype=np.float64).ravel()
    m = np.asarray(trials, dtype=np.float64).ravel()
    if y.shape != m.shape:
        raise ValueError(f"successes and trials must be aligned, got {y.shape} and {m.shape}")
    if np.any(m < 0) or np.any(y < 0) or np.any(y > m) or not np.all(np.isfinite(y) & np.isfinite(m)):
        raise ValueError("every cluster needs 0 <= successes <= trials")
    keep = m > 0
    y, m = y[keep], m[keep]
    n, x, g = int(m.sum()), int(y.sum()), int(m.size)
    if n == 0:
        return None
    p = x / n
    if np.all(m == 1) or p in (0.0, 1.0):
        low, high = _wilson(p, n, level)
        return ClusteredWilson(x, n, g, p, low, high, 1.0, float(n))
    if g < 2:
        return ClusteredWilson(x, n, g, p, None, None, None, None)
    var_cluster = g / (g - 1) * float(np.sum((y - p * m) ** 2)) / (n * n)
    deff = max(1.0, var_cluster / (p * (1 - p) / n))
    low, high = _wilson(p, n / deff, level)
    return ClusteredWilson(x, n, g, p, low, high, deff, n / deff)
