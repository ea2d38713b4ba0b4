"""The A/B of two versions of a skill (or of its ``description``): trials paired by (case,
repeat), the change in recall and in false activations, and the verdict in ``eval``'s words.

A change is significant when the percentile interval of the cluster bootstrap (clusters = cases)
of the mean paired difference excludes 0; McNemar's exact p is reported beside it. Verdict:

- REGRESS — recall fell significantly, or false activations rose significantly;
- PROGRESS — recall rose significantly without false activations rising significantly, or false
  activations fell significantly without recall falling significantly, with at least
  ``min_cases`` cases of each kind (should and should not fire);
- UNDERPOWERED — such a gain on fewer cases; or no significant change, and a side has fewer than
  ``min_cases`` cases or an interval wider than ±``max_mde`` (or none): the run could not have
  seen a real change;
- NOISE — no significant change although the run could have seen one.

``split_cases`` makes an optional held-out split: 60/40 stratified by ``should_trigger``, seeded,
so that a description tuned on the first part is judged on the second.
"""

from __future__ import annotations

import math

import numpy as np

from knowmeter import defaults
from knowmeter.activation._model import ArmFigures, Comparison, PairedChange
from knowmeter.activation._stats import Trial, arm_figures
from knowmeter.exit_codes import EXIT_NOT_PASSED, EXIT_OK
from knowmeter.stats import mcnemar_exact, paired_bootstrap

__all__ = ["MIN_CASES", "compare_arms", "split_cases", "verdict"]

#: Fewer cases than this on either side (should / should not trigger) is UNDERPOWERED.
MIN_CASES = 5
TUNE_SHARE = 0.6


def split_cases(cases: dict[str, bool], seed: int, share: float = TUNE_SHARE) -> dict[str, list[str]]:
    """``{"tune": [...], "held-out": [...]}``: each ``should_trigger`` stratum shuffled with a
    seeded generator, its first ``ceil(share·n)`` cases to tune (at least one left held out when
    the stratum has two or more)."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[str]] = {"tune": [], "held-out": []}
    for flag in (True, False):
        ids = sorted(c for c, should in cases.items() if should is flag)
        order = [ids[i] for i in rng.permutation(len(ids))]
        cut = math.ceil(share * len(order))
        if len(order) >= 2:
            cut = min(cut, len(order) - 1)
        out["tune"] += order[:cut]
        out["held-out"] += order[cut:]
    return {k: sorted(v) for k, v in out.items()}


def _change(
    measure: str, should: bool, control: list[Trial], treatment: list[Trial], *, b: int, seed: int, level: float
) -> PairedChange:
    arm_b = {(t.case_id, t.repeat): t for t in treatment if t.should_trigger is should and t.activated is not None}
    pairs = [
        (t.case_id, bool(t.activated), bool(arm_b[(t.case_id, t.repeat)].activated))
        for t in control
        if t.should_trigger is should and t.activated is not None and (t.case_id, t.repeat) in arm_b
    ]
    test = mcnemar_exact([(c, t) for _, c, t in pairs])
    low = high = diff = None
    if pairs:
        r = paired_bootstrap(
            [float(c) for _, c, _ in pairs],
            [float(t) for _, _, t in pairs],
            [p[0] for p in pairs],
            b=b,
            seed=seed,
            level=level,
        )
        diff = r.estimate
        if r.percentile is not None:
            low, high = r.percentile
    significant = low is not None and high is not None and (low > 0 or high < 0)
    return PairedChange(
        measure=measure,  # type: ignore[arg-type]
        pairs=len(pairs),
        cases=len({p[0] for p in pairs}),
        difference=diff,
        low=low,
        high=high,
        control_only=test.control_only,
        treatment_only=test.treatment_only,
        mcnemar_p=test.p_value,
        significant=significant,
    )


def compare_arms(
    part: str,
    skill: str,
    control: tuple[str, list[Trial]],
    treatment: tuple[str, list[Trial]],
    *,
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = defaults.SEED,
    level: float = defaults.CI_LEVEL,
) -> Comparison:
    """The two arms' figures and the paired changes in recall and false activations."""
    (c_name, c_trials), (t_name, t_trials) = control, treatment
    kw = {"b": b, "seed": seed, "level": level}
    return Comparison(
        part=part,  # type: ignore[arg-type]
        control=arm_figures(c_name, skill, c_trials, **kw),  # type: ignore[arg-type]
        treatment=arm_figures(t_name, skill, t_trials, **kw),  # type: ignore[arg-type]
        changes=[
            _change("recall", True, c_trials, t_trials, b=b, seed=seed, level=level),
            _change("false_activation_rate", False, c_trials, t_trials, b=b, seed=seed, level=level),
        ],
    )


def _pct(x: float | None) -> str:
    return "unknown" if x is None else f"{x * 100:+.1f} pts"


def _name(c: PairedChange) -> str:
    return "recall" if c.measure == "recall" else "false activations"


def _describe(c: PairedChange) -> str:
    name = _name(c)
    ci = "" if c.low is None or c.high is None else f" [{c.low * 100:+.1f}, {c.high * 100:+.1f}]"
    p = "" if c.mcnemar_p is None else f", McNemar p={c.mcnemar_p:.3g}"
    return f"{name} {_pct(c.difference)}{ci} over {c.cases} case(s), {c.pairs} pair(s){p}"


def verdict(
    comparison: Comparison, *, min_cases: int = MIN_CASES, max_mde: float = defaults.MAX_MDE
) -> tuple[str, list[str], int]:
    """The verdict of one comparison (see the module docstring), its reasons and the exit code."""
    recall, false_act = comparison.changes
    up = {c.measure: c.significant and (c.low or 0) > 0 for c in comparison.changes}
    down = {c.measure: c.significant and (c.high or 0) < 0 for c in comparison.changes}
    lines = [_describe(recall), _describe(false_act)]
    if down["recall"] or up["false_activation_rate"]:
        return "REGRESS", lines, EXIT_NOT_PASSED
    few = [
        f"{name}: {c.cases} case(s) (fewer than {min_cases})"
        for name, c in (("should-trigger", recall), ("should-not-trigger", false_act))
        if c.cases < min_cases
    ]
    if up["recall"] or down["false_activation_rate"]:
        if not few:
            return "PROGRESS", lines, EXIT_OK
        return "UNDERPOWERED", [*lines, "a gain on too few cases to call:", *few], EXIT_NOT_PASSED
    weak = few + [
        f"{_name(c)}: interval wider than ±{max_mde:g} or unknown"
        for c in (recall, false_act)
        if c.low is None or c.high is None or (c.high - c.low) / 2 > max_mde
    ]
    if weak:
        return "UNDERPOWERED", lines + weak, EXIT_NOT_PASSED
    return "NOISE", lines, EXIT_NOT_PASSED


def solo_reasons(arm: ArmFigures) -> list[str]:
    """The summary line of a one-arm run (no comparison)."""
    r, f = arm.recall, arm.false_activation_rate
    return [
        f"recall {r.successes}/{r.trials} over {r.cases} case(s), false activations {f.successes}/{f.trials} "
        f"over {f.cases} case(s)"
    ]
