"""The activation figures of one arm, from its trials (case × repeat), clustered by case: the
repeats of one prompt are not independent draws, so every interval treats the case as the unit.

- recall = activations / trials over the should-trigger cases; false-activation rate =
  activations / trials over the should-not cases; precision = correct activations / all
  activations (a ratio over the cases where the skill fired); routing top-1 accuracy = trials
  whose first loaded skill is the expected winner. Each with the clustered Wilson interval
  (``knowmeter.stats.wilson_clustered``: Wilson on the effective n = n / design effect).
- F1 = 2·TP / (2·TP + FP + FN), its interval the percentile interval of F1 over cluster-bootstrap
  resamples of the cases (``resample_counts``: the same draws as the project's bootstrap).

A trial whose task failed is left out and counted (``errors``); unknown is None, never 0.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from knowmeter import defaults
from knowmeter.activation._model import ArmFigures, ConfusedCase, Rate
from knowmeter.stats import resample_counts, wilson_clustered, wilson_interval

__all__ = ["Trial", "arm_figures", "clustered_rate"]


@dataclass(frozen=True, slots=True)
class Trial:
    """One task's outcome for the skill under test. ``activated`` is None when the task failed;
    ``loaded`` are the skills that counted as activated, in order; ``how`` is ``skill-tool``,
    ``read``, ``both`` or None."""

    case_id: str
    repeat: int
    should_trigger: bool
    activated: bool | None
    loaded: tuple[str, ...] = ()
    how: str | None = None
    expected_winner: str | None = None
    error: str | None = None


def clustered_rate(successes: list[int], trials: list[int], level: float) -> Rate:
    """A share over clusters with its clustered Wilson interval (None figures when no trial).

    When every trial agrees (a share of 0 or 1) the spread between cases cannot be estimated; the
    worst case is assumed — repeats perfectly correlated, so the effective n is the number of
    cases (design effect n / cases) — rather than counting every repeat as independent."""
    cw = wilson_clustered(successes, trials, level) if sum(trials) else None
    if cw is None:
        return Rate(successes=0, trials=0, cases=0, rate=None, low=None, high=None, design_effect=None)
    if cw.rate in (0.0, 1.0) and cw.n > cw.n_clusters:
        low, high = wilson_interval(int(cw.rate) * cw.n_clusters, cw.n_clusters, level) or (None, None)
        return Rate(
            successes=cw.successes,
            trials=cw.n,
            cases=cw.n_clusters,
            rate=cw.rate,
            low=low,
            high=high,
            design_effect=cw.n / cw.n_clusters,
        )
    return Rate(
        successes=cw.successes,
        trials=cw.n,
        cases=cw.n_clusters,
        rate=cw.rate,
        low=cw.low,
        high=cw.high,
        design_effect=cw.design_effect,
    )


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    denom = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), np.nan)


def _f1_interval(
    tp: list[int], fp: list[int], fn: list[int], *, b: int, seed: int, level: float
) -> tuple[float | None, float | None]:
    k = len(tp)
    if k < 2:
        return None, None
    counts_tp, counts_fp, counts_fn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn))
    draws = np.concatenate(
        [_f1(c @ counts_tp, c @ counts_fp, c @ counts_fn) for _, _, c in resample_counts(k, b, seed)]
    )
    draws = draws[np.isfinite(draws)]
    if draws.size < 2:
        return None, None
    alpha = (1 - level) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha])
    return float(low), float(high)


def arm_figures(
    arm: str,
    skill: str,
    trials: list[Trial],
    *,
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = defaults.SEED,
    level: float = defaults.CI_LEVEL,
) -> ArmFigures:
    """The figures of one arm (see the module docstring) and its confusion list."""
    by_case: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        by_case[t.case_id].append(t)
    pos_y: list[int] = []
    pos_m: list[int] = []
    neg_y: list[int] = []
    neg_m: list[int] = []
    prec_y: list[int] = []
    prec_m: list[int] = []
    tp: list[int] = []
    fp: list[int] = []
    fn: list[int] = []
    route_y: list[int] = []
    route_m: list[int] = []
    confused: list[ConfusedCase] = []
    errors = 0
    for case_id, case_trials in by_case.items():
        ok = [t for t in case_trials if t.activated is not None]
        errors += len(case_trials) - len(ok)
        fired = sum(1 for t in ok if t.activated)
        should = case_trials[0].should_trigger
        (pos_y if should else neg_y).append(fired)
        (pos_m if should else neg_m).append(len(ok))
        prec_y.append(fired if should else 0)
        prec_m.append(fired)
        tp.append(fired if should else 0)
        fp.append(0 if should else fired)
        fn.append(len(ok) - fired if should else 0)
        winner = case_trials[0].expected_winner
        misses = None
        if winner is not None:
            route_y.append(sum(1 for t in ok if t.loaded and t.loaded[0] == winner))
            route_m.append(len(ok))
            misses = len(ok) - route_y[-1]
        wrong = len(ok) - fired if should else fired
        if wrong or misses or len(ok) < len(case_trials):
            confused.append(
                ConfusedCase(
                    case_id=case_id,
                    should_trigger=should,
                    activated=fired,
                    trials=len(ok),
                    errors=len(case_trials) - len(ok),
                    how=sorted({t.how for t in ok if t.how}),
                    loaded_instead=sorted({s for t in ok for s in t.loaded if s != skill}),
                    expected_winner=winner,
                    top1_misses=misses,
                )
            )
    total_tp, total_fp, total_fn = sum(tp), sum(fp), sum(fn)
    denom = 2 * total_tp + total_fp + total_fn
    f1_low, f1_high = _f1_interval(tp, fp, fn, b=b, seed=seed, level=level)
    return ArmFigures(
        arm=arm,
        skill=skill,
        cases=len(by_case),
        trials=sum(len(v) for v in by_case.values()),
        errors=errors,
        recall=clustered_rate(pos_y, pos_m, level),
        false_activation_rate=clustered_rate(neg_y, neg_m, level),
        precision=clustered_rate(prec_y, prec_m, level),
        f1=None if denom == 0 else 2 * total_tp / denom,
        f1_low=f1_low,
        f1_high=f1_high,
        routing_top1=clustered_rate(route_y, route_m, level) if route_m else None,
        confusion=sorted(confused, key=lambda c: c.case_id),
        level=level,
        b=b,
        seed=seed,
    )
