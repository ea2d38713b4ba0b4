"""Paired effect sizes and power: Cohen's d_z, Hedges' g_av, minimum detectable effect, N needed.

- ``d_z = mean(d) / sd(d)`` on the paired differences ``d`` (sd with n - 1); ``t = d_z · √n`` is
  the paired t statistic.
- ``g_av`` (Lakens 2013, eq. 10): the mean difference over the *average* of the two arms'
  standard deviations, times Hedges' exact small-sample correction
  ``J(df) = Γ(df/2) / (√(df/2) · Γ((df-1)/2))`` with ``df = n - 1``. Unlike d_z it is on the
  scale of the scores themselves, so it compares with between-subject effect sizes.
- Minimum detectable effect (paired t, two-sided α, power 1-β):
  ``MDE = (t_{1-α/2, n-1} + t_{1-β, n-1}) · sd(d) / √n`` — the usual t-approximation to the
  non-central t power function (within ~0.01 power of exact for n >= 10).
- N needed: the smallest n with ``MDE(n) <= |effect|`` for the observed sd(d).

Every function returns ``None`` when the quantity is undefined (too few pairs, zero spread where
a ratio needs one, no effect to detect), never a stand-in number.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from knowmeter import defaults
from knowmeter.stats._special import norm_ppf, t_ppf

#: An effect this small relative to the standard deviation of the differences is zero plus float
#: rounding. It also bounds ``n_for_effect``: below (2.8 / 1e-9)² ≈ 7.9e18 pairs, an int64.
NEGLIGIBLE_EFFECT_RTOL = 1e-9


def _finite(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64).ravel()
    return arr[np.isfinite(arr)]


def cohen_dz(diffs: npt.ArrayLike) -> float | None:
    """Cohen's d_z of paired differences (NaN excluded); None for n < 2 or zero spread."""
    d = _finite(diffs)
    if d.size < 2:
        return None
    sd = float(np.std(d, ddof=1))
    return float(np.mean(d)) / sd if sd > 0 else None


def hedges_correction(df: int) -> float | None:
    """Hedges' exact bias correction J(df); None for df < 2 (J(1) = 0 makes g meaningless)."""
    if df < 2:
        return None
    return math.exp(math.lgamma(df / 2.0) - math.lgamma((df - 1) / 2.0)) / math.sqrt(df / 2.0)


def hedges_g_av(control: npt.ArrayLike, treatment: npt.ArrayLike) -> float | None:
    """Hedges' g_av of aligned pairs (a pair with a NaN on either side is dropped)."""
    c = np.asarray(control, dtype=np.float64).ravel()
    t = np.asarray(treatment, dtype=np.float64).ravel()
    if c.shape != t.shape:
        raise ValueError(f"control and treatment must be aligned, got {c.shape} and {t.shape}")
    keep = np.isfinite(c) & np.isfinite(t)
    c, t = c[keep], t[keep]
    j = hedges_correction(c.size - 1)
    if j is None:
        return None
    sd_av = (float(np.std(c, ddof=1)) + float(np.std(t, ddof=1))) / 2.0
    if sd_av == 0:
        return None
    return j * float(np.mean(t - c)) / sd_av


def _critical_sum(n: int, alpha: float, power: float) -> float:
    df = n - 1
    return t_ppf(1.0 - alpha / 2.0, df) + t_ppf(power, df)


def minimum_detectable_effect(
    sd: float | None, n: int, *, alpha: float = defaults.ALPHA, power: float = defaults.POWER
) -> float | None:
    """Smallest true mean difference a paired t-test on ``n`` pairs detects with ``power``
    (two-sided ``alpha``), for paired differences with standard deviation ``sd``."""
    if sd is None or not math.isfinite(sd) or n < 2:
        return None
    return _critical_sum(n, alpha, power) * sd / math.sqrt(n)


def n_for_effect(
    effect: float | None, sd: float | None, *, alpha: float = defaults.ALPHA, power: float = defaults.POWER
) -> int | None:
    """Pairs needed for a paired t-test to detect ``effect`` with ``power``; None when the effect
    is zero / unknown (no finite N detects it). An effect within ``NEGLIGIBLE_EFFECT_RTOL`` of
    ``sd`` counts as zero: it is what rounding leaves of a zero mean (a mean of repeat means of
    thirds is -5.6e-17, not 0), and would otherwise ask for ~10^33 pairs."""
    if effect is None or sd is None or not (math.isfinite(effect) and math.isfinite(sd)):
        return None
    if abs(effect) <= NEGLIGIBLE_EFFECT_RTOL * sd or effect == 0:
        return None
    if sd == 0:
        return 2

    def enough(n: int) -> bool:
        return _critical_sum(n, alpha, power) * sd / math.sqrt(n) <= abs(effect)

    guess = (norm_ppf(1.0 - alpha / 2.0) + norm_ppf(power)) * sd / abs(effect)
    lo = max(2, math.floor(guess * guess))  # the normal approximation never overshoots
    if enough(lo):
        return lo
    # The critical sum falls with n, so n >= (crit(lo) · sd / effect)² is enough: a tight bracket.
    hi = max(lo + 1, math.ceil((_critical_sum(lo, alpha, power) * sd / abs(effect)) ** 2))
    while not enough(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi
