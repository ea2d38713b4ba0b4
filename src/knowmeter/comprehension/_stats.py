"""Per-dimension and overall statistics of a comprehension run, from the stored results.

Per arm (baseline, with-skill): graded / ungraded cases, case pass rate with its Wilson interval,
mean behavior pass fraction. Paired (with-skill − baseline), on the cases graded in both arms:

- McNemar's exact test on the case verdicts (one pair per case; with repeats a case's verdict in
  an arm is PASS when it passed in more than half its graded repeats);
- a cluster bootstrap (clusters = cases, so repeats stay together) of the difference in behavior
  pass fraction per (case, repeat) pair;
- Holm's adjustment of the per-dimension McNemar p-values (the overall test is the primary one
  and is not in that family);
- the minimum detectable difference in pass fraction (paired t approximation on per-case
  differences, ``stats.minimum_detectable_effect``) and UNDERPOWERED when fewer than
  ``min_pairs`` cases are paired or that difference exceeds ``max_mde``.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from knowmeter import defaults
from knowmeter.stats import holm, mcnemar_exact, minimum_detectable_effect, paired_bootstrap, wilson_interval
from knowmeter.store import ComprehensionResult

ARMS = ("baseline", "with_skill")


@dataclass(frozen=True, slots=True)
class StatsConfig:
    """Decision settings of the comprehension statistics."""

    alpha: float = defaults.ALPHA
    min_pairs: int = 10
    max_mde: float = 0.25
    power: float = defaults.POWER
    bootstrap_samples: int = defaults.BOOTSTRAP_SAMPLES
    seed: int = 0
    level: float = defaults.CI_LEVEL


@dataclass(frozen=True, slots=True)
class Graded:
    """One stored grading: a case under an arm at a repeat (``passed`` None when ungraded)."""

    case_id: str
    dimension: str
    arm: str
    repeat: int
    passed: bool | None
    fraction: float | None


@dataclass(frozen=True, slots=True)
class Answer:
    """What the statistics and the section read of a stored task: the role of its variant, its
    repeat and its grading."""

    role: str
    repeat: int
    result: ComprehensionResult

    @property
    def arm(self) -> str:
        """``control`` → baseline, treatment → with_skill."""
        return "baseline" if self.role == "control" else "with_skill"


def graded_rows(answers: Iterable[Answer]) -> list[Graded]:
    """The gradings of stored answers; ungraded only when the grader failed (an answer that is
    not there is graded FAIL)."""
    rows = []
    for a in answers:
        comp, ok = a.result, a.result.graded
        rows.append(
            Graded(
                comp.case_id,
                comp.dimension,
                a.arm,
                a.repeat,
                comp.verdict == "PASS" if ok else None,
                comp.behavior_pass_fraction if ok else None,
            )
        )
    return rows


def _case_verdicts(rows: list[Graded], arm: str) -> dict[str, bool]:
    votes: dict[str, list[bool]] = {}
    for r in rows:
        if r.arm == arm and r.passed is not None:
            votes.setdefault(r.case_id, []).append(r.passed)
    return {c: 2 * sum(v) > len(v) for c, v in votes.items()}


def _arm(rows: list[Graded], arm: str, level: float) -> dict[str, Any]:
    mine = [r for r in rows if r.arm == arm]
    cases = _case_verdicts(rows, arm)
    passed = sum(cases.values())
    ci = wilson_interval(passed, len(cases), level)
    fractions = [r.fraction for r in mine if r.fraction is not None]
    return {
        "cases_graded": len(cases),
        "cases_passed": passed,
        "pass_rate": passed / len(cases) if cases else None,
        "wilson": list(ci) if ci else None,
        "gradings": len(mine),
        "ungraded": sum(r.passed is None for r in mine),
        "behavior_pass_fraction": statistics.fmean(fractions) if fractions else None,
        "failed_cases": sorted((c for c, ok in cases.items() if not ok), key=_id_key),
    }


def _id_key(case_id: str) -> tuple[int, str]:
    return (int(case_id), "") if case_id.isdigit() else (1 << 62, case_id)


def _paired(rows: list[Graded], cfg: StatsConfig) -> dict[str, Any]:
    base, skill = _case_verdicts(rows, "baseline"), _case_verdicts(rows, "with_skill")
    both = sorted(set(base) & set(skill), key=_id_key)
    test = mcnemar_exact([(base[c], skill[c]) for c in both])
    frac = {(r.case_id, r.repeat, r.arm): r.fraction for r in rows if r.fraction is not None}
    keys = sorted({(c, rep) for c, rep, _ in frac if (c, rep, "baseline") in frac and (c, rep, "with_skill") in frac})
    b_vals = [frac[(c, rep, "baseline")] for c, rep in keys]
    s_vals = [frac[(c, rep, "with_skill")] for c, rep in keys]
    boot = (
        paired_bootstrap(b_vals, s_vals, [c for c, _ in keys], b=cfg.bootstrap_samples, seed=cfg.seed, level=cfg.level)
        if keys
        else None
    )
    per_case: dict[str, list[float]] = {}
    for (c, _), b, s in zip(keys, b_vals, s_vals, strict=True):
        per_case.setdefault(c, []).append(s - b)
    diffs = [statistics.fmean(v) for v in per_case.values()]
    sd = statistics.stdev(diffs) if len(diffs) > 1 else None
    mde = minimum_detectable_effect(sd, len(diffs), alpha=cfg.alpha, power=cfg.power)
    weak = []
    if len(both) < cfg.min_pairs:
        weak.append(f"only {len(both)} case(s) graded in both arms (< {cfg.min_pairs})")
    if mde is None:
        weak.append("the minimum detectable difference is unknown")
    elif mde > cfg.max_mde:
        weak.append(
            f"the minimum detectable difference in pass fraction at {cfg.power:.0%} power is {mde:.2f} "
            f"(> {cfg.max_mde})"
        )
    return {
        "cases_paired": len(both),
        "mcnemar": test.to_dict(),
        "difference_in_pass_rate": (sum(skill[c] for c in both) - sum(base[c] for c in both)) / len(both)
        if both
        else None,
        "behavior_fraction_difference": boot.to_dict() if boot else None,
        "mde": mde,
        "underpowered": bool(weak),
        "underpowered_reasons": weak,
    }


def _block(rows: list[Graded], cfg: StatsConfig) -> dict[str, Any]:
    return {
        "baseline": _arm(rows, "baseline", cfg.level),
        "with_skill": _arm(rows, "with_skill", cfg.level),
        "paired": _paired(rows, cfg),
    }


def comprehension_stats(rows: list[Graded], cfg: StatsConfig) -> dict[str, Any]:
    """``{"overall": block, "dimensions": {C1: block, …}}`` for the dimensions with cases; each
    dimension's paired block also carries its Holm-adjusted McNemar p-value."""
    dims = sorted({r.dimension for r in rows}, key=lambda d: int(d[1:]))
    blocks = {d: _block([r for r in rows if r.dimension == d], cfg) for d in dims}
    adjusted = holm(
        [b["paired"]["mcnemar"]["p_value"] if b["paired"]["cases_paired"] else None for b in blocks.values()]
    )
    for b, p in zip(blocks.values(), adjusted, strict=True):
        b["paired"]["p_holm"] = p
    overall = _block(rows, cfg)
    return {
        "overall": overall,
        "dimensions": blocks,
        "settings": {
            "alpha": cfg.alpha,
            "min_pairs": cfg.min_pairs,
            "max_mde": cfg.max_mde,
            "power": cfg.power,
            "bootstrap_samples": cfg.bootstrap_samples,
            "seed": cfg.seed,
            "level": cfg.level,
            "bootstrap_clusters": "case",
            "holm_family": "dimensions",
        },
    }
