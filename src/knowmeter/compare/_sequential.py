"""When a sequential run stops (``eval --sequential``): the looks of a group-sequential design and
the rule applied at each (design/decisions.md, "Sequential decisions").

The samples run in a seeded random order, in batches; after each batch the paired comparison is
computed as usual (``compare_all``) with the look's nominal level (``spending_boundaries``)
replacing alpha. The run stops

- for **efficacy** when, for every treatment, the composite is significantly higher or lower, or a
  layer is significantly lower (the verdict at that level is PROGRESS, CAUTIOUS or REGRESS);
- for **futility** when no treatment can still be decided: the conditional power to cross the
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
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowmeter.compare._inputs import CompareConfig, Observation
from knowmeter.compare._pair import compare_all
from knowmeter.compare._results import PairComparison
from knowmeter.stats import conditional_power, nominal_alpha, shared_resamples, spending_boundaries

#: stop for futility when the chance to still detect a change of max_mde is below this, both ways
FUTILITY_POWER = 0.10
#: looks planned by default (at every fifth of the samples, from min_pairs samples on): more looks
#: stop a little sooner but raise the final boundary, which costs power at the planned N
LOOKS = 5

StopKind = Literal["efficacy", "futility", "planned_n"]


class PairLook(BaseModel):
    """One treatment at one look."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    treatment: str
    z: float | None = Field(description="The composite's paired mean difference over its standard error.")
    decided: bool = Field(description="A significant composite change or layer drop at the look's level.")
    power_gain: float | None = Field(description="Conditional power to detect +max_mde by the planned N.")
    power_loss: float | None = Field(description="Conditional power to detect −max_mde by the planned N.")


class Look(BaseModel):
    """What one look saw and decided."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=1)
    samples: int = Field(ge=1, description="Samples run so far (each under every variant and repeat).")
    fraction: float = Field(gt=0, le=1, description="Information fraction: samples / planned samples.")
    boundary_z: float
    nominal_alpha: float
    pairs: list[PairLook]
    stop: StopKind | None


class SequentialRecord(BaseModel):
    """The sequential design of a run and its looks (run.json ``sequential``, report ``sequential``)."""

    model_config = ConfigDict(extra="forbid")

    method: str = (
        "group-sequential, Lan–DeMets O'Brien–Fleming-type alpha spending (two-sided), interim "
        "boundaries capped at z 3.29; futility by conditional power at max_mde"
    )
    alpha: float
    planned_samples: int = Field(ge=1)
    look_samples: list[int] = Field(description="Samples after which a look is planned (the last: all).")
    order_seed: int = Field(description="Seed of the random order the samples run in.")
    looks: list[Look] = Field(default_factory=list)
    stopped: StopKind | None = None
    reason: str | None = None

    @property
    def stop_alpha(self) -> float | None:
        """The nominal level of the last look taken (the final verdict's ``sequential_alpha``)."""
        return self.looks[-1].nominal_alpha if self.looks else None


def look_samples(planned: int, min_pairs: int, looks: int = LOOKS) -> list[int]:
    """Sample counts to look at: every ``planned / looks`` samples, none before ``min_pairs``
    (a win on fewer pairs is only CAUTIOUS), the last at ``planned``."""
    step = max(1, math.ceil(planned / looks))
    counts = [n for n in range(step, planned, step) if n >= min_pairs]
    return [*counts, planned]


@lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    return tuple(spending_boundaries(fractions, alpha))


def _z_and_power(pc: PairComparison, t: float, planned: int, final_z: float, max_mde: float) -> PairLook:
    comp = pc.metrics.get("composite")
    sig = [m for m in pc.metrics.values() if m.significant]
    decided = any(m.metric == "composite" or (m.diff.estimate or 0) < 0 for m in sig)
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
    bounds = _boundaries(fractions[: k + 1], record.alpha)
    final_z = _boundaries(fractions, record.alpha)[-1]
    level = nominal_alpha(bounds[-1])
    at = config.model_copy(update={"sequential_alpha": level, "alpha": record.alpha})
    with shared_resamples():
        comparisons = compare_all(control_obs, treatments, at, control=control)
    pairs = [_z_and_power(pc, fractions[k], planned, final_z, config.max_mde) for pc in comparisons]
    futile = [
        p
        for p in pairs
        if not p.decided
        and p.power_gain is not None
        and p.power_loss is not None
        and max(p.power_gain, p.power_loss) < FUTILITY_POWER
    ]
    stop: StopKind | None = None
    if pairs and all(p.decided for p in pairs):
        stop = "efficacy"
    elif k + 1 == len(record.look_samples):
        stop = "planned_n"
    elif pairs and all(p.decided or p in futile for p in pairs):
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
