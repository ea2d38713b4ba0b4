"""When a sequential run stops (``eval --sequential``): the looks of a group-sequential design and
the rule applied at each (design/decisions.md, "Sequential decisions").

The samples run in a seeded random order, in batches; after each batch the paired comparison is
computed as usual (``compare_all``) with the look's nominal level replacing alpha. The boundaries
are Haybittle–Peto's by default (``haybittle_peto_boundaries``: interim looks at z 3.29, the last
at alpha, so a run that reaches the planned N gets the fixed design's verdict) or, with
``design="obf"``, O'Brien–Fleming-type alpha spending (``spending_boundaries``). The run stops

- for **efficacy** when, for every treatment, the verdict at the look's level is firm: PROGRESS
  (a clean win), REGRESS, or CAUTIOUS for a layer significantly lower. A significant gain that is
  CAUTIOUS for a point estimate (a layer mean under its gate, a gain under ``min_effect``, more
  errors) does not stop the run: more samples can lift it, and at the last look the verdict is
  the fixed design's;
- for **futility**, only when the design asks for it (``--futility``; off by default, as a futility
  stop costs power), when no treatment can still be decided: the conditional power to cross the
  final boundary by the planned N, were the true composite change ``max_mde`` in either direction,
  is below ``FUTILITY_POWER`` both ways (non-binding: it cannot raise the false-call rates);
- at the last look (the planned N) otherwise.

The verdict itself is not decided here: the report decides it from the stored results, with the
stopping look's nominal level as ``CompareConfig.sequential_alpha``; gates, the McNemar failure
guard and every other rule of ``decide_verdict`` apply at the stop as they do at a fixed N.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

from knowmeter import defaults
from knowmeter._looks import Look, PairLook, SequentialRecord, StopKind
from knowmeter.compare._inputs import CompareConfig, Observation
from knowmeter.compare._pair import compare_all
from knowmeter.compare._results import PairComparison, PairVerdict, VerdictLevel
from knowmeter.compare._verdict import decide_verdict
from knowmeter.stats import (
    conditional_power,
    haybittle_peto_boundaries,
    nominal_alpha,
    shared_resamples,
    spending_boundaries,
)

#: stop for futility when the chance to still detect a change of max_mde is below this, both ways
FUTILITY_POWER = 0.10

#: ``haybittle-peto`` (the default): interim looks at z 3.29, the last at the unadjusted alpha;
#: ``obf``: Lan–DeMets O'Brien–Fleming-type spending, interims capped at z 3.29, exactly alpha
Design = defaults.SequentialDesign
DESIGNS = defaults.SEQUENTIAL_DESIGNS
#: looks planned (at every tenth or fifth of the samples, from min_pairs samples on). A
#: Haybittle–Peto look costs no power at the planned N (the last look stays at alpha) and adds
#: under 0.001 to the overall level; an obf look raises the final boundary (ten: z 2.12, five:
#: 2.07), which costs power, so it looks less often
LOOKS: dict[Design, int] = {"haybittle-peto": 10, "obf": 5}
METHODS: dict[Design, str] = {
    "haybittle-peto": "group-sequential, Haybittle–Peto (two-sided): interim boundaries z 3.29, the last look "
    "at the unadjusted alpha",
    "obf": "group-sequential, Lan–DeMets O'Brien–Fleming-type alpha spending (two-sided), interim "
    "boundaries capped at z 3.29",
}


def look_samples(planned: int, min_pairs: int, looks: int) -> list[int]:
    """Sample counts to look at: every ``planned / looks`` samples from the first step or
    ``min_pairs``, whichever is later (a win on fewer pairs is only CAUTIOUS), the last at ``planned``."""
    step = max(1, math.ceil(planned / looks))
    return [*range(max(step, min_pairs), planned, step), planned]


def new_record(
    planned: int,
    min_pairs: int,
    order_seed: int,
    *,
    design: Design = defaults.SEQUENTIAL_DESIGN,
    futility: bool = defaults.FUTILITY,
) -> SequentialRecord:
    """The design of a sequential run of ``planned`` samples, before its first look."""
    method = METHODS[design] + ("; futility by conditional power at max_mde" if futility else "; no futility stop")
    return SequentialRecord(
        method=method,
        design=design,
        futility=futility,
        alpha=defaults.ALPHA,
        planned_samples=planned,
        look_samples=look_samples(planned, min_pairs, LOOKS[design]),
        order_seed=order_seed,
    )


@lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], alpha: float, design: Design) -> tuple[float, ...]:
    """The design's boundaries for looks at ``fractions`` (the last may be an interim)."""
    if design == "haybittle-peto":
        return tuple(haybittle_peto_boundaries(fractions, alpha))
    return tuple(spending_boundaries(fractions, alpha))


#: pair verdicts at a look that stop the run: more samples would not change them, while a
#: significant gain that is CAUTIOUS for a point estimate (a layer mean under its gate, a gain
#: under min_effect, more errors) could still become PROGRESS, so the run goes on
_FIRM = {(VerdictLevel.PROGRESS, "clean_win"), (VerdictLevel.CAUTIOUS, "layer_regress")}


def _firm(verdict: PairVerdict) -> bool:
    return verdict.level == VerdictLevel.REGRESS or (verdict.level, verdict.rule) in _FIRM


def _z_and_power(pc: PairComparison, decided: bool, t: float, planned: int, final_z: float, max_mde: float) -> PairLook:
    comp = pc.metrics.get("composite")
    if comp is None or comp.diff.estimate is None or not comp.sd_diff or comp.n_samples < 2:
        return PairLook(treatment=pc.treatment, z=None, decided=decided, power_gain=None, power_loss=None)
    z = comp.diff.estimate / (comp.sd_diff / math.sqrt(comp.n_samples))
    drift = max_mde * math.sqrt(planned) / comp.sd_diff
    return PairLook(
        treatment=pc.treatment,
        z=z,
        decided=decided,
        power_gain=conditional_power(z, t, drift, final_z),
        power_loss=conditional_power(-z, t, drift, final_z),
    )


def futile(pairs: Sequence[PairLook]) -> bool:
    """Whether no treatment of a look can still be decided: each undecided one would detect a true
    change of max_mde by the planned N with under ``FUTILITY_POWER`` conditional power both ways."""
    return bool(pairs) and all(
        p.decided
        or (p.power_gain is not None and p.power_loss is not None and max(p.power_gain, p.power_loss) < FUTILITY_POWER)
        for p in pairs
    )


def take_look(
    control_obs: Sequence[Observation],
    treatments: Mapping[str, Sequence[Observation]],
    record: SequentialRecord,
    config: CompareConfig,
    *,
    control: str | None = None,
) -> Look:
    """The next look of ``record`` over the observations of the samples run so far (appended to
    ``record.looks``, with ``stopped`` and ``reason`` set when it stops the run)."""
    k = len(record.looks)
    samples = record.look_samples[k]
    planned = record.planned_samples
    fractions = tuple(n / planned for n in record.look_samples)
    bounds = _boundaries(fractions[: k + 1], record.alpha, record.design)
    final_z = _boundaries(fractions, record.alpha, record.design)[-1]
    last = k + 1 == len(record.look_samples)
    # Haybittle–Peto's last look is the fixed test itself: exactly alpha, not a rounded z
    level = record.alpha if last and record.design == "haybittle-peto" else nominal_alpha(bounds[-1])
    at = config.model_copy(update={"sequential_alpha": level, "alpha": record.alpha})
    with shared_resamples():
        comparisons = compare_all(control_obs, treatments, at, control=control)
    verdicts = decide_verdict(comparisons, {}, at).pairs
    pairs = [
        _z_and_power(pc, _firm(v), fractions[k], planned, final_z, config.max_mde)
        for pc, v in zip(comparisons, verdicts, strict=True)
    ]
    stop: StopKind | None = None
    if last:  # the planned N: not an early stop, whatever the look decided
        stop = "planned_n"
    elif pairs and all(p.decided for p in pairs):
        stop = "efficacy"
    elif record.futility and futile(pairs):
        stop = "futility"
    look = Look(
        index=k + 1,
        samples=samples,
        fraction=fractions[k],
        boundary_z=bounds[-1],
        nominal_alpha=level,
        pairs=pairs,
        stop=stop,
    )
    record.looks.append(look)
    if stop is not None:
        record.stopped, record.reason = stop, _reason(look, record)
    return look


def _reason(look: Look, record: SequentialRecord) -> str:
    where = (
        f"stopped at look {look.index} of {len(record.look_samples)} after {look.samples} of "
        f"{record.planned_samples} samples"
    )
    level = f"boundary |z| ≥ {look.boundary_z:.2f}, nominal p < {look.nominal_alpha:.2g}"
    if look.stop == "efficacy":
        zs = ", ".join(f"{p.treatment} z {p.z:+.2f}" for p in look.pairs if p.z is not None)
        return f"{where}: the answer is clear ({level}; {zs})"
    if look.stop == "futility":
        powers = ", ".join(
            f"{p.treatment} {max(p.power_gain or 0.0, p.power_loss or 0.0):.0%}" for p in look.pairs if not p.decided
        )
        return (
            f"{where} for futility: even a true change of max_mde would be detected by the planned N "
            f"with under {FUTILITY_POWER:.0%} conditional power ({powers})"
        )
    return f"ran all {record.planned_samples} planned samples without an early stop ({level} at the last look)"
