"""Binary outcomes: McNemar's exact test for paired pass/fail, Wilson interval for a pass rate."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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
        return {"both": self.both, "control_only": self.control_only, "treatment_only": self.treatment_only,
                "neither": self.neither, "n_pairs": self.n_pairs, "n_discordant": self.n_discordant,
                "p_value": self.p_value}


def mcnemar_exact(pairs: list[tuple[bool, bool]]) -> McNemarResult:
    """McNemar's exact test on ``(control_passed, treatment_passed)`` pairs: two-sided binomial
    test of the discordant pairs at p = 1/2 (``scipy.stats.binomtest(b, b + c)``)."""
    both = sum(1 for c, t in pairs if c and t)
    control_only = sum(1 for c, t in pairs if c and not t)
    treatment_only = sum(1 for c, t in pairs if t and not c)
    neither = len(pairs) - both - control_only - treatment_only
    p = binom_half_two_sided(control_only, control_only + treatment_only) if pairs else None
    return McNemarResult(both, control_only, treatment_only, neither, p)


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for a proportion; None when n = 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n ({n}), got {successes}")
    z = norm_ppf(1.0 - (1.0 - level) / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high
