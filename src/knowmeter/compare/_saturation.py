"""Saturation: does another repeat still narrow the CI?

The CI of a mean over samples × repeats narrows with more repeats only while within-sample
(run-to-run) noise matters; once the spread between samples dominates it stops narrowing — the
CI has *saturated* in repeats, and only more samples will tighten it.

The curve is the CI width over cumulative repeats (the first repeat index, the first two, …),
each with the same seed and B. The call uses the relative narrowing of the last step,
``(w[r-1] - w[r]) / w[r-1]``: below ``tolerance`` → saturated. Confidence: one step → low; the
last two steps giving the same call → medium (two steps) or high (three or more); the last two
steps disagreeing → low.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from knowmeter.compare._inputs import CompareConfig
from knowmeter.compare._results import Saturation, SaturationPoint
from knowmeter.stats import BootstrapEstimate, FloatArray, announce_means, bootstrap_mean


def saturation_curve(
    metric: str,
    values: FloatArray,
    samples: Sequence[str],
    repeats: Sequence[int],
    full: BootstrapEstimate,
    config: CompareConfig,
) -> Saturation:
    """Saturation of ``metric`` from per-observation ``values`` (NaN excluded) with their sample
    ids and repeat indices; ``full`` is the already computed estimate over all repeats."""
    method = config.ci_method
    points = []
    for count, subset, labels in _first_repeats(values, samples, repeats):
        result = BootstrapEstimate.from_result(
            bootstrap_mean(subset, labels, b=config.bootstrap_samples, seed=config.seed, level=config.ci_level),
            n_non_finite=0,
        )
        points.append(SaturationPoint(repeats=count, n=result.n, ci_width=result.interval(method).width))
    points.append(SaturationPoint(repeats=len(set(repeats)), n=full.n, ci_width=full.interval(method).width))
    return _call(metric, method, points, config.saturation_tolerance)


def announce_saturation(
    values: FloatArray, samples: Sequence[str], repeats: Sequence[int], config: CompareConfig
) -> None:
    """Inside ``shared_resamples``: ``saturation_curve`` will resample these subsets
    (``knowmeter.stats.announce_means``), so an earlier draw of the same resamples serves them."""
    for _, subset, labels in _first_repeats(values, samples, repeats):
        announce_means(subset, labels, b=config.bootstrap_samples, seed=config.seed)


def _first_repeats(
    values: FloatArray, samples: Sequence[str], repeats: Sequence[int]
) -> Iterator[tuple[int, FloatArray, npt.NDArray[Any]]]:
    """Per count of repeats short of all: the values of the first ``count`` repeats, with their
    sample ids."""
    rep = np.asarray(repeats)
    labels = np.asarray(samples)
    distinct = sorted(set(rep.tolist()))
    for count in range(1, len(distinct)):
        mask = np.isin(rep, distinct[:count])
        yield count, values[mask], labels[mask]


def _narrowing(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or before <= 0:
        return None
    return (before - after) / before


def _call(
    metric: str, method: Literal["percentile", "bca"], points: list[SaturationPoint], tolerance: float
) -> Saturation:
    widths = [p.ci_width for p in points]
    steps = [_narrowing(a, b) for a, b in itertools.pairwise(widths)]
    last = steps[-1] if steps else None
    if last is None:
        return Saturation(
            metric=metric,
            method=method,
            points=points,
            tolerance=tolerance,
            last_narrowing=None,
            saturated=None,
            confidence=None,
            note="CI width unknown for a repeat step"
            if steps
            else "single repeat: run with --repeat 2 or more to see whether repeats still help",
        )
    saturated = last < tolerance
    confidence: Literal["low", "medium", "high"]
    previous = steps[-2] if len(steps) >= 2 else None
    if previous is None:
        confidence = "low"
    elif (previous < tolerance) == saturated:
        confidence = "high" if len(steps) >= 3 else "medium"
    else:
        confidence = "low"
    note = (
        f"the last repeat narrowed the CI by {last:.1%} (< {tolerance:.0%}): more repeats will not help, "
        "more samples will"
        if saturated
        else f"the last repeat still narrowed the CI by {last:.1%} (>= {tolerance:.0%}): more repeats help"
    )
    return Saturation(
        metric=metric,
        method=method,
        points=points,
        tolerance=tolerance,
        last_narrowing=last,
        saturated=saturated,
        confidence=confidence,
        note=note,
    )
