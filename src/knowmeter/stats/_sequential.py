"""Group-sequential boundaries: Lan–DeMets alpha spending with the O'Brien–Fleming-type function,
two-sided and symmetric, and conditional power for a futility stop.

The test statistic at look k is a z-score on the information fraction ``t_k`` (share of the
planned samples paired so far); under H0 the scores form a Brownian motion in ``t``. The
boundary ``c_k`` is found so that crossing ``|Z_k| >= c_k`` for the first time at look k has
probability ``α(t_k) − α(t_{k−1})`` with ``α(t) = 2 − 2Φ(z_{1−α/2} / √t)`` (Lan & DeMets 1983),
by recursive numerical integration of the continuation density (Armitage, McPherson & Rowe
1969; Jennison & Turnbull 2000, ch. 19). An interim boundary is never above ``cap`` (default
z 3.29, nominal p 0.001, as in Haybittle 1971 and Peto et al. 1976) so that a resampling p-value
can reach it; what a capped look spends beyond the function is taken from the looks after it (the
spending is tracked exactly). A look at ``t = 1`` spends what is left, so the whole design has
exactly ``alpha`` whatever the timing of the looks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from knowmeter.stats._special import norm_cdf, norm_ppf

_GRID = 801  # points of the continuation region per look (odd, for Simpson's rule)


def _phi(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.asarray(np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def _cdf(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    from math import erf

    return np.asarray(0.5 * (1.0 + np.vectorize(erf)(x / math.sqrt(2.0))))


def obf_spent(t: float, alpha: float) -> float:
    """Two-sided alpha spent by information fraction ``t`` (O'Brien–Fleming-type Lan–DeMets)."""
    if t <= 0:
        return 0.0
    if t >= 1:
        return alpha
    return 2.0 - 2.0 * norm_cdf(norm_ppf(1 - alpha / 2) / math.sqrt(t))


def _simpson(n: int) -> npt.NDArray[np.float64]:
    w = np.ones(n)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return w / 3.0


#: the highest interim boundary (two-sided nominal p 0.001)
INTERIM_CAP = 3.2905


_State = tuple["npt.NDArray[np.float64] | None", "npt.NDArray[np.float64] | None"]


def _exit_prob(c: float, t: float, sd: float, state: _State) -> float:
    """P(first crossing |Z| >= c at this look) from the continuation density of the last look."""
    grid, density = state
    if grid is None or density is None:
        return 2.0 * (1.0 - norm_cdf(c))
    b = c * math.sqrt(t)
    tails = _cdf((-b - grid) / sd) + _cdf((grid - b) / sd)
    return float(np.sum(density * tails))


def _continue(c: float, t: float, sd: float, state: _State) -> _State:
    """The continuation (sub-)density of ``B(t) = Z √t`` on ``|Z| < c`` at this look, times
    Simpson weights, from the last look's (``sd``: √ of the fraction since it)."""
    grid, density = state
    b = c * math.sqrt(t)
    new_grid = np.linspace(-b, b, _GRID)
    if grid is None or density is None:
        new_density = _phi(new_grid / sd) / sd
    else:
        kernel = _phi((new_grid[:, None] - grid[None, :]) / sd) / sd
        new_density = kernel @ density
    return new_grid, new_density * _simpson(_GRID) * (new_grid[1] - new_grid[0])


def _check(fractions: Sequence[float]) -> list[float]:
    if not fractions or any(b <= a for a, b in itertools.pairwise(fractions)):
        raise ValueError(f"information fractions must increase: {list(fractions)}")
    return [min(max(float(t), 1e-9), 1.0) for t in fractions]


def crossing_probabilities(fractions: Sequence[float], bounds: Sequence[float]) -> list[float]:
    """Under H0, the probability that the first crossing of ``|Z_k| >= bounds[k]`` is at look k
    (their sum is the design's two-sided type-I error), by the same numerical integration."""
    ts = _check(fractions)
    probs: list[float] = []
    state: _State = (None, None)
    prev_t = 0.0
    for t, c in zip(ts, bounds, strict=True):
        sd = math.sqrt(t - prev_t)
        probs.append(_exit_prob(c, t, sd, state))
        state, prev_t = _continue(c, t, sd, state), t
    return probs


def haybittle_peto_boundaries(fractions: Sequence[float], alpha: float, interim: float = INTERIM_CAP) -> list[float]:
    """Haybittle–Peto: every interim look at ``interim`` (z 3.29, nominal p 0.001), a look at
    ``t = 1`` at the unadjusted ``z_{1−α/2}`` — so whatever the fixed test decides at the planned N
    the design decides too, earlier or at the end; the overall level is a little above ``alpha``
    (``crossing_probabilities`` gives it)."""
    ts = _check(fractions)
    return [norm_ppf(1 - alpha / 2) if t >= 1 else interim for t in ts]


def spending_boundaries(fractions: Sequence[float], alpha: float, cap: float = INTERIM_CAP) -> list[float]:
    """The z boundaries ``c_k`` for looks at increasing information fractions in (0, 1]; a look
    at 1 spends the rest of ``alpha``."""
    ts = _check(fractions)
    bounds: list[float] = []
    spent = 0.0
    grid: npt.NDArray[np.float64] | None = None  # values of B(t_{k-1}) = Z √t in the continuation region
    density: npt.NDArray[np.float64] | None = None  # its (sub-)density times Simpson weights
    prev_t = 0.0
    for k, t in enumerate(ts):
        target = obf_spent(t, alpha) - spent
        sd = math.sqrt(t - prev_t)

        def exit_prob(c: float, t: float = t, sd: float = sd, state: _State = (grid, density)) -> float:
            return _exit_prob(c, t, sd, state)

        lo, hi = 0.0, 40.0
        if target <= 0:
            c = hi
        else:
            for _ in range(80):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if exit_prob(mid) > target else (lo, mid)
            c = (lo + hi) / 2
        if t < 1 and c > cap and obf_spent(1.0, alpha) - spent > 2 * exit_prob(cap):
            c = cap
        spent += exit_prob(c)
        bounds.append(c)
        if k == len(ts) - 1:
            break
        grid, density = _continue(c, t, sd, (grid, density))
        prev_t = t
    return bounds


def nominal_alpha(boundary: float) -> float:
    """The two-sided nominal p-value level of a z boundary."""
    return 2.0 * (1.0 - norm_cdf(boundary))


def conditional_power(z: float, t: float, drift: float, final_boundary: float) -> float:
    """P(Z at t = 1 ≥ ``final_boundary``) given ``Z_t = z`` when the true effect gives ``Z_1`` the
    mean ``drift`` (the effect over its standard error at the planned N); the looks in between
    are ignored, as usual for a futility rule (Lan, Simon & Halperin 1982)."""
    if t >= 1:
        return float(z >= final_boundary)
    remaining = 1.0 - t
    mean = z * math.sqrt(t) + drift * remaining
    return 1.0 - norm_cdf((final_boundary - mean) / math.sqrt(remaining))
