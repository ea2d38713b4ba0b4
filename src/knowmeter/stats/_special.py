"""Distribution functions the statistics need, in pure Python (no scipy at runtime).

Normal CDF/quantile, Student t CDF/quantile (through the regularised incomplete beta function)
and the two-sided exact binomial tail at p = 1/2. Accuracy is ~1e-12 for the normal quantile and
~1e-10 for the t quantile over the ranges used here; the tests check them against scipy.
"""

from __future__ import annotations

import functools
import math

_SQRT2 = math.sqrt(2.0)

# Acklam's rational approximation to the normal quantile (relative error < 1.2e-9), refined below.
_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01, -1.328068155288572e01)
_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549732539343734e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
_P_LOW = 0.02425


def norm_cdf(x: float) -> float:
    """Standard normal CDF."""
    return 0.5 * math.erfc(-x / _SQRT2)


def norm_ppf(p: float) -> float:
    """Standard normal quantile; ``-inf``/``inf`` at 0/1, NaN outside [0, 1]."""
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p < _P_LOW:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    elif p <= 1.0 - _P_LOW:
        q = p - 0.5
        r = q * q
        x = (
            (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5])
            * q
            / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
        )
    else:
        q = math.sqrt(-2.0 * math.log1p(-p))
        x = -(((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    # One Halley step on the exact CDF brings the error to machine precision.
    e = norm_cdf(x) - p
    u = e * math.sqrt(2.0 * math.pi) * math.exp(x * x / 2.0)
    return x - u / (1.0 + x * u / 2.0)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """Upper tail P(T > t) of Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def t_cdf(t: float, df: float) -> float:
    """Student t CDF."""
    return 1.0 - t_sf(t, df)


def _t_pdf(t: float, df: float) -> float:
    log_pdf = (
        math.lgamma((df + 1.0) / 2.0)
        - math.lgamma(df / 2.0)
        - 0.5 * math.log(df * math.pi)
        - (df + 1.0) / 2.0 * math.log1p(t * t / df)
    )
    return math.exp(log_pdf)


def _cornish_fisher(p: float, df: float) -> float:
    """Cornish-Fisher expansion of the t quantile in powers of 1/df."""
    z = norm_ppf(p)
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


@functools.lru_cache(maxsize=4096)
def t_ppf(p: float, df: float) -> float:
    """Student t quantile (safeguarded Newton on the exact CDF). Cached: power and N-needed
    searches ask for the same few levels at the same degrees of freedom again and again."""
    if not 0.0 < p < 1.0:
        return {0.0: -math.inf, 1.0: math.inf}.get(p, math.nan)
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    if p == 0.5:
        return 0.0
    expansion = _cornish_fisher(p, df)
    if df > 1e5:
        return expansion  # error O(df^-4), below 1e-15 here, where lgamma would lose digits
    upper = 1.0 - p  # target upper tail, computed without cancellation by t_sf
    lo, hi = 0.0, max(1.0, norm_ppf(p))
    while t_sf(hi, df) > upper:
        lo, hi = hi, hi * 2.0
    # Start Newton from the expansion: close for moderate df, so few exact CDF evaluations.
    x = min(max(expansion, lo), hi)
    for _ in range(200):
        f = t_sf(x, df) - upper  # decreasing in x
        if f > 0:
            lo = x
        else:
            hi = x
        step = f / _t_pdf(x, df)
        candidate = x + step
        if not lo < candidate < hi:
            candidate = 0.5 * (lo + hi)
        if abs(candidate - x) <= 1e-13 * max(1.0, abs(x)):
            return candidate
        x = candidate
    return x


def binom_half_two_sided(k: int, n: int) -> float:
    """Two-sided exact binomial p-value for ``k`` successes in ``n`` trials at p = 1/2
    (``min(1, 2 · P(X <= min(k, n - k)))``; the distribution is symmetric, so this equals the
    "sum of outcomes no more likely than the observed one" definition)."""
    if n == 0:
        return 1.0
    low = min(k, n - k)
    log_terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2.0) for i in range(low + 1)
    ]
    top = max(log_terms)
    tail = math.exp(top) * math.fsum(math.exp(v - top) for v in log_terms)
    return min(1.0, 2.0 * tail)
