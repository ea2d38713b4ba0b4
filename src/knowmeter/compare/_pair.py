"""Paired comparison of treatments against a control, tested hierarchically.

Multiplicity (serial gatekeeping, Dmitrienko, Offen & Westfall 2003): the composite is the
primary endpoint and is tested first, at alpha, Holm-adjusted across the treatments' composites.
Only for a treatment whose composite is significant are its layers tested — Holm across its
layers at alpha / (number of treatments) — so the composite keeps its full alpha (Holm over the
composite and its own layers halved the power of the primary endpoint, and judge-only runs tested
the same thing twice). When the composite is not significant the layers form a separate
``layer_safety_check`` family, Holm at alpha / (2 × treatments): it can show a layer that
regressed or gained while the composite hid it (REGRESS / CAUTIOUS), never PROGRESS; at half the
level, identical variants are called REGRESS at most alpha/2 + alpha/4 of the time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from knowmeter import defaults
from knowmeter.compare._align import Arm, PairedMetric, align, cluster_means, ok_pairs, passed_pairs
from knowmeter.compare._inputs import METRICS, CompareConfig, Observation
from knowmeter.compare._results import (
    ErrorBalance,
    HypothesisFamily,
    LayerGate,
    McNemarTest,
    MetricComparison,
    PairComparison,
    PermutationTest,
)
from knowmeter.compare._saturation import announce_saturation, saturation_curve
from knowmeter.stats import (
    BootstrapEstimate,
    BootstrapResult,
    FloatArray,
    PermutationResult,
    announce_means,
    bootstrap_means,
    cohen_dz,
    finite,
    gatekept,
    hedges_g_av,
    holm,
    mcnemar_exact,
    minimum_detectable_effect,
    n_for_effect,
    sign_flip_tests,
)


def compare_pair(
    control_obs: Iterable[Observation],
    treatment_obs: Iterable[Observation],
    config: CompareConfig | None = None,
    *,
    control: str | None = None,
    treatment: str | None = None,
) -> PairComparison:
    """Compare one treatment with the control (composite first, then its layers). The variant
    names default to the one variant found in each list."""
    control_list, treatment_list = list(control_obs), list(treatment_obs)
    name = _variant_name(treatment_list, treatment, "treatment")
    return compare_all(control_list, {name: treatment_list}, config, control=control)[0]


def compare_all(
    control_obs: Iterable[Observation],
    treatments: Mapping[str, Iterable[Observation]],
    config: CompareConfig | None = None,
    *,
    control: str | None = None,
) -> list[PairComparison]:
    """Compare every treatment with the control; p-values are adjusted hierarchically (the
    composite first, then the layers; see the module docstring)."""
    control_list = list(control_obs)
    control_arm = Arm.build(_variant_name(control_list, control, "control"), control_list)
    return compare_pairings([Pairing.of(control_arm, Arm.build(name, obs)) for name, obs in treatments.items()], config)


def compare_pairings(pairings: Sequence[Pairing], config: CompareConfig | None = None) -> list[PairComparison]:
    """``compare_all`` of the control paired with each treatment (``Pairing``)."""
    config = config or CompareConfig()
    return _adjust([_compare(pairing, config) for pairing in pairings], config)


def _variant_name(observations: Sequence[Observation], given: str | None, role: str) -> str:
    if given is not None:
        return given
    names = sorted({o.variant for o in observations})
    if len(names) != 1:
        raise ValueError(
            f"cannot tell the {role} variant from observations of {names or 'no variant'}; pass {role}=<name>"
        )
    return names[0]


def _present(arm: Arm, metric: str) -> bool:
    return any(o.score(metric) is not None for o in arm.scored)


@dataclass(frozen=True)
class Pairing:
    """The control and one treatment paired: the metrics both arms have, their aligned pairs, the
    paired differences (one row per (sample, repeat) key, one column per metric; NaN: not
    paired) and each row's sample. Made once per treatment, for the announcement and the test."""

    control: Arm
    treatment: Arm
    compared: list[str]
    paired: dict[str, PairedMetric]
    diffs: FloatArray
    samples: list[str]

    @classmethod
    def of(cls, control: Arm, treatment: Arm) -> Pairing:
        compared = [m for m in METRICS if _present(control, m) and _present(treatment, m)]
        paired = align(control, treatment, compared)
        keys = sorted({key for pm in paired.values() for key in pm.keys})
        row = {key: i for i, key in enumerate(keys)}
        diffs = np.full((len(keys), len(compared)), np.nan)
        for j, metric in enumerate(compared):
            c, t = paired[metric].arrays()
            diffs[[row[k] for k in paired[metric].keys], j] = t - c
        return cls(control, treatment, compared, paired, diffs, [k[0] for k in keys])


def announce_comparisons(pairings: Sequence[Pairing], config: CompareConfig) -> None:
    """Inside ``shared_resamples``: ``compare_pairings`` will resample these paired differences
    and their saturation (``knowmeter.stats.announce_means``), so one draw of the same resamples
    serves them all."""
    for pairing in pairings:
        paired = pairing.paired
        announce_means(pairing.diffs, pairing.samples, b=config.bootstrap_samples, seed=config.seed)
        if "composite" in paired:  # its saturation curve
            pm = paired["composite"]
            c, t = pm.arrays()
            announce_saturation(t - c, pm.samples(), [k[1] for k in pm.keys], config)


def _compare(pairing: Pairing, config: CompareConfig) -> PairComparison:
    control, treatment = pairing.control, pairing.treatment
    compared, paired, diffs, samples = pairing.compared, pairing.paired, pairing.diffs, pairing.samples
    boots = bootstrap_means(diffs, samples, b=config.bootstrap_samples, seed=config.seed, level=config.test_ci_level)
    perms = sign_flip_tests(diffs, samples, n_resamples=config.permutation_samples, seed=config.seed)
    metrics = {m: _metric(paired[m], boot, perm, config) for m, boot, perm in zip(compared, boots, perms, strict=True)}
    layers_c, layers_t = _layer_union(control), _layer_union(treatment)
    composite = metrics.get("composite")
    saturation = None
    if composite is not None and composite.n_pairs:
        pm = paired["composite"]
        c, t = pm.arrays()
        saturation = saturation_curve("composite", t - c, pm.samples(), [k[1] for k in pm.keys], composite.diff, config)
    return PairComparison(
        control=control.variant,
        treatment=treatment.variant,
        n_control=len(control.by_key),
        n_treatment=len(treatment.by_key),
        layers_control=layers_c,
        layers_treatment=layers_t,
        composite_comparable=layers_c == layers_t,
        comparability_note=_comparability_note(layers_c, layers_t, paired.get("composite")),
        metrics=metrics,
        mcnemar=_mcnemar(control, treatment),
        errors=_error_balance(control, treatment),
        gates=_gates(control, treatment, config.threshold),
        saturation=saturation,
        families=[],
    )


def _metric(
    pm: PairedMetric, boot: BootstrapResult, perm: PermutationResult, config: CompareConfig
) -> MetricComparison:
    c, t = pm.arrays()
    samples = pm.samples()
    per_sample = cluster_means(samples, t - c)
    sd = float(np.std(per_sample, ddof=1)) if per_sample.size >= 2 else None
    mean_effect = float(per_sample.mean()) if per_sample.size else None
    diff = BootstrapEstimate.from_result(boot, n_non_finite=pm.drops.get("non_finite", 0))
    decision: Literal["percentile", "bca"] = config.ci_method if diff.bca.low is not None else "percentile"
    return MetricComparison(
        metric=pm.metric,
        family="composite" if pm.metric == "composite" else "layers",
        n_pairs=len(pm.keys),
        n_samples=per_sample.size,
        dropped=pm.drop_counts(),
        control_mean=float(c.mean()) if c.size else None,
        treatment_mean=float(t.mean()) if t.size else None,
        diff=diff,
        decision_ci=decision,
        permutation=PermutationTest(
            p_value=perm.p_value, method=perm.method, n_permutations=perm.n_permutations, seed=perm.seed
        ),
        p_value=perm.p_value,
        p_adjusted=None,
        significant=None,
        direction=None,
        sd_diff=finite(sd),
        d_z=finite(cohen_dz(per_sample)),
        hedges_g_av=finite(hedges_g_av(cluster_means(samples, c), cluster_means(samples, t))),
        mde=finite(minimum_detectable_effect(sd, per_sample.size, alpha=config.alpha, power=config.power)),
        n_needed=n_for_effect(mean_effect, sd, alpha=config.alpha, power=config.power),
    )


def _layer_union(arm: Arm) -> list[str]:
    used = {layer for o in arm.scored if o.score("composite") is not None for layer in o.layer_set}
    return [layer for layer in defaults.LAYERS if layer in used]


def _comparability_note(layers_c: list[str], layers_t: list[str], composite: PairedMetric | None) -> str | None:
    if layers_c != layers_t:
        return (
            f"composite built from {'+'.join(layers_c) or 'no layer'} in the control but "
            f"{'+'.join(layers_t) or 'no layer'} in the treatment: the composites are not comparable; "
            "compare per layer, or configure the same assertions and judges for both"
        )
    mismatched = composite.drops.get("layer_mismatch", 0) if composite else 0
    if mismatched:
        return f"{mismatched} pair(s) left out of the composite because their two results used different layers"
    return None


def _mcnemar(control: Arm, treatment: Arm) -> McNemarTest | None:
    pairs = passed_pairs(control, treatment)
    if not pairs:
        return None
    result = mcnemar_exact(pairs)
    repeated = any(key[1] > 0 for key in control.by_key)
    note = "repeats are treated as independent pairs (the test ignores their clustering)" if repeated else None
    return McNemarTest(
        n_pairs=result.n_pairs,
        both=result.both,
        control_only=result.control_only,
        treatment_only=result.treatment_only,
        neither=result.neither,
        p_value=result.p_value,
        note=note,
    )


def _error_balance(control: Arm, treatment: Arm) -> ErrorBalance:
    pairs = ok_pairs(control, treatment)
    # McNemar on "ran without error": its control_only counts the pairs only the treatment errored on
    result = mcnemar_exact(pairs)
    return ErrorBalance(
        n_pairs=result.n_pairs,
        control_only=result.treatment_only,
        treatment_only=result.control_only,
        both=result.neither,
        p_value=result.p_value,
    )


def _layer_mean(arm: Arm, layer: str) -> float | None:
    values = [v for o in arm.scored if (v := o.score(layer)) is not None and math.isfinite(v)]
    return sum(values) / len(values) if values else None


def _gates(control: Arm, treatment: Arm, threshold: float) -> list[LayerGate]:
    gates = []
    for layer in defaults.LAYERS:
        c, t = _layer_mean(control, layer), _layer_mean(treatment, layer)
        if c is None and t is None:
            continue
        gates.append(
            LayerGate(
                layer=layer,
                threshold=threshold,
                control_mean=c,
                treatment_mean=t,
                control_pass=None if c is None else c >= threshold,
                treatment_pass=None if t is None else t >= threshold,
            )
        )
    return gates


def _adjust(raw: list[PairComparison], config: CompareConfig) -> list[PairComparison]:
    """Composite first (Holm across treatments), then each treatment's layers behind it; fill
    adjusted p, significance, direction and the families tested."""
    m = len(raw)
    composites = holm([pc.metrics["composite"].p_value if "composite" in pc.metrics else None for pc in raw])
    out = []
    for pc, p_composite in zip(raw, composites, strict=True):
        metrics = dict(pc.metrics)
        families = []
        if "composite" in metrics:
            metrics["composite"] = _significance(metrics["composite"], p_composite, config.test_alpha, "composite")
            families.append(
                HypothesisFamily(
                    name="composite",
                    metrics=["composite"],
                    level=config.test_alpha,
                    gate=None,
                    method=f"Holm across {m} treatment composite(s)" if m > 1 else "single test",
                )
            )
        layers = [name for name in metrics if name != "composite"]
        gate_open = bool(metrics.get("composite") and metrics["composite"].significant)
        family: Literal["layers", "layer_safety_check"] = "layers" if gate_open else "layer_safety_check"
        # With the gate closed the safety family is tested on its own (gate p 0 = no bound) at
        # half the level, so that identical variants are called REGRESS at most alpha/2 (composite
        # lower) + alpha/4 (a layer lower) of the time.
        weight = 1.0 / m if gate_open else 0.5 / m
        adjusted = gatekept(p_composite if gate_open else 0.0, [metrics[n].p_value for n in layers], weight)
        for name, p in zip(layers, adjusted, strict=True):
            metrics[name] = _significance(metrics[name], p, config.test_alpha, family)
        if layers:
            share = (
                (f"alpha / {m} treatments" if m > 1 else "alpha")
                if gate_open
                else (f"alpha / (2 × {m} treatments)" if m > 1 else "alpha / 2")
            )
            families.append(
                HypothesisFamily(
                    name=family,
                    metrics=layers,
                    level=config.test_alpha * weight,
                    method=f"Holm across the layers at {share}",
                    gate="tested because the composite is significant"
                    if gate_open
                    else "the composite is not significant: a safety check that can only name a layer that "
                    "regressed or gained, never support PROGRESS",
                )
            )
        out.append(pc.model_copy(update={"metrics": metrics, "families": families}))
    return out


def _significance(
    mc: MetricComparison,
    p_adjusted: float | None,
    alpha: float,
    family: Literal["composite", "layers", "layer_safety_check"],
) -> MetricComparison:
    if p_adjusted is None or mc.diff.estimate is None:
        return mc.model_copy(update={"p_adjusted": p_adjusted, "family": family})
    significant = p_adjusted < alpha and mc.diff.interval(mc.decision_ci).excludes_zero()
    direction: Literal["up", "down", "none"] = "none" if not significant else "up" if mc.diff.estimate > 0 else "down"
    return mc.model_copy(
        update={"p_adjusted": p_adjusted, "significant": significant, "direction": direction, "family": family}
    )
