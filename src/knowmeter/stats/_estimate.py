"""A bootstrap interval and estimate as stored in reports: pydantic models that carry everything
needed to reproduce them (method, level, B, seed); unknown numbers are ``None``, never NaN."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

from knowmeter.stats._bootstrap import BootstrapResult


def finite(value: float | None) -> float | None:
    """``value`` as a float, or None when it is missing, NaN or infinite."""
    return float(value) if value is not None and math.isfinite(value) else None


class ConfidenceInterval(BaseModel):
    """A bootstrap interval with everything needed to reproduce it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: Literal["percentile", "bca"]
    level: float
    low: float | None
    high: float | None
    b: int
    seed: int

    @property
    def width(self) -> float | None:
        return None if self.low is None or self.high is None else self.high - self.low

    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


class BootstrapEstimate(BaseModel):
    """A mean (or mean difference) with its percentile and BCa intervals from the same resamples.

    ``n`` observations from ``n_samples`` samples (clusters); ``n_non_finite`` NaN/inf scores
    were excluded (absent scores are not counted here).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    estimate: float | None
    standard_error: float | None
    n: int
    n_samples: int
    n_non_finite: int
    percentile: ConfidenceInterval
    bca: ConfidenceInterval

    @classmethod
    def from_result(cls, r: BootstrapResult, *, n_non_finite: int) -> BootstrapEstimate:
        def ci(method: Literal["percentile", "bca"]) -> ConfidenceInterval:
            bounds = r.interval(method)
            low, high = bounds if bounds else (None, None)
            return ConfidenceInterval(
                method=method, level=r.level, low=finite(low), high=finite(high), b=r.b, seed=r.seed
            )

        return cls(
            estimate=finite(r.estimate),
            standard_error=finite(r.standard_error),
            n=r.n,
            n_samples=r.n_clusters,
            n_non_finite=n_non_finite,
            percentile=ci("percentile"),
            bca=ci("bca"),
        )

    def interval(self, method: Literal["percentile", "bca"]) -> ConfidenceInterval:
        """The requested interval, falling back to the percentile one when BCa is undefined."""
        chosen = self.bca if method == "bca" else self.percentile
        return chosen if chosen.low is not None else self.percentile
