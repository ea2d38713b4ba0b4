"""Paired comparison of treatments against a control, with Holm across treatments × metrics."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np

from knowmeter.compare._align import Arm, PairedMetric, align, cluster_means, passed_pairs
from knowmeter.compare._inputs import LAYERS, METRICS, CompareConfig, Observation
from knowmeter.compare._results import (
    BootstrapEstimate,
    LayerGate,
    McNemarTest,
    MetricComparison,
    PairComparison,
    PermutationTest,
    finite,
)
from knowmeter.compare._saturation import saturation_curve
from knowmeter.stats import (
    BootstrapResult,
    PermutationResult,
    bootstrap_means,
    cohen_dz,
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
    """Compare one treatment with the control (Holm across this pair's metrics). The variant
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
    """Compare every treatment with the control; p-values are Holm-adjusted across all
    treatments × metrics (composite and layers) together."""
    config = config or CompareConfig()
    control_list = list(control_obs)
    control_arm = Arm.build(_variant_name(control_list, control, "control"), control_list)
    raw = [_compare(control_arm, Arm.build(name, obs), config) for name, obs in treatments.items()]
    return _adjust(raw, config)


def _variant_name(observations: Sequence[Observation], given: str | None, role: str) -> str:
    if given is not None:
        return given
    names = sorted({o.variant for o in observations})
    if len(names) != 1:
        raise ValueError(f"cannot tell the {role} variant from observations of {names or 'no variant'}; "
                         f"pass {role}=<name>")
    return names[0]


def _present(arm: Arm, metric: str) -> bool:
    return any(o.score(metric) is not None for o in arm.scored)


def _compare(control: Arm, treatment: Arm, config: CompareConfig) -> PairComparison:
    compared = [m for m in METRICS if _present(control, m) and _present(treatment, m)]
    paired = align(control, treatment, compared)
    keys = sorted({key for pm in paired.values() for key in pm.keys})
    row = {key: i for i, key in enumerate(keys)}
    diffs = np.full((len(keys), len(compared)), np.nan)
    for j, metric in enumerate(compared):
        c, t = paired[metric].arrays()
        diffs[[row[k] for k in paired[metric].keys], j] = t - c
    samples = [k[0] for k in keys]
    boots = bootstrap_means(diffs, samples, b=config.bootstrap_samples, seed=config.seed, level=config.ci_level)
    perms = sign_flip_tests(diffs, samples, n_resamples=config.permutation_samples, seed=config.seed)
    metrics = {m: _metric(paired[m], boot, perm, config) for m, boot, perm in zip(compared, boots, perms, strict=True)}
    layers_c, layers_t = _layer_union(control), _layer_union(treatment)
    composite = metrics.get("composite")
    saturation = None
    if composite is not None and composite.n_pairs:
        pm = paired["composite"]
        c, t = pm.arrays()
        saturation = saturation_curve("composite", t - c, pm.samples(), [k[1] for k in pm.keys],
                                      composite.diff, config)
    return PairComparison(
        control=control.variant, treatment=treatment.variant,
        n_control=len(control.by_key), n_treatment=len(treatment.by_key),
        layers_control=layers_c, layers_treatment=layers_t,
        composite_comparable=layers_c == layers_t,
        comparability_note=_comparability_note(layers_c, layers_t, paired.get("composite")),
        metrics=metrics, mcnemar=_mcnemar(control, treatment), gates=_gates(control, treatment, config.threshold),
        saturation=saturation, holm_family_size=0)


def _metric(pm: PairedMetric, boot: BootstrapResult, perm: PermutationResult,
            config: CompareConfig) -> MetricComparison:
    c, t = pm.arrays()
    samples = pm.samples()
    per_sample = cluster_means(samples, t - c)
    sd = float(np.std(per_sample, ddof=1)) if per_sample.size >= 2 else None
    mean_effect = float(per_sample.mean()) if per_sample.size else None
    diff = BootstrapEstimate.from_result(boot, n_non_finite=pm.drops.get("non_finite", 0))
    decision: Literal["percentile", "bca"] = config.ci_method if diff.bca.low is not None else "percentile"
    return MetricComparison(
        metric=pm.metric, n_pairs=len(pm.keys), n_samples=per_sample.size, dropped=pm.drop_counts(),
        control_mean=float(c.mean()) if c.size else None, treatment_mean=float(t.mean()) if t.size else None,
        diff=diff, decision_ci=decision,
        permutation=PermutationTest(p_value=perm.p_value, method=perm.method, n_permutations=perm.n_permutations,
                                    seed=perm.seed),
        p_value=perm.p_value, p_adjusted=None, significant=None, direction=None, sd_diff=finite(sd),
        d_z=finite(cohen_dz(per_sample)),
        hedges_g_av=finite(hedges_g_av(cluster_means(samples, c), cluster_means(samples, t))),
        mde=finite(minimum_detectable_effect(sd, per_sample.size, alpha=config.alpha, power=config.power)),
        n_needed=n_for_effect(mean_effect, sd, alpha=config.alpha, power=config.power))


def _layer_union(arm: Arm) -> list[str]:
    used = {layer for o in arm.scored if o.score("composite") is not None for layer in o.layer_set}
    return [layer for layer in LAYERS if layer in used]


def _comparability_note(layers_c: list[str], layers_t: list[str], composite: PairedMetric | None) -> str | None:
    if layers_c != layers_t:
        return (f"composite built from {'+'.join(layers_c) or 'no layer'} in the control but "
                f"{'+'.join(layers_t) or 'no layer'} in the treatment: the composites are not comparable; "
                "compare per layer, or configure the same assertions and judges for both")
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
    return McNemarTest(n_pairs=result.n_pairs, both=result.both, control_only=result.control_only,
                       treatment_only=result.treatment_only, neither=result.neither, p_value=result.p_value,
                       note=note)


def _layer_mean(arm: Arm, layer: str) -> float | None:
    values = [v for o in arm.scored if (v := o.score(layer)) is not None and math.isfinite(v)]
    return sum(values) / len(values) if values else None


def _gates(control: Arm, treatment: Arm, threshold: float) -> list[LayerGate]:
    gates = []
    for layer in LAYERS:
        c, t = _layer_mean(control, layer), _layer_mean(treatment, layer)
        if c is None and t is None:
            continue
        gates.append(LayerGate(layer=layer, threshold=threshold, control_mean=c, treatment_mean=t,
                               control_pass=None if c is None else c >= threshold,
                               treatment_pass=None if t is None else t >= threshold))
    return gates


def _adjust(raw: list[PairComparison], config: CompareConfig) -> list[PairComparison]:
    """Holm across every (treatment, metric); fill adjusted p, significance and direction."""
    family = [(i, m) for i, pc in enumerate(raw) for m in pc.metrics]
    adjusted = dict(zip(family, holm([raw[i].metrics[m].p_value for i, m in family]), strict=True))
    size = sum(1 for key in family if adjusted[key] is not None)
    out = []
    for i, pc in enumerate(raw):
        metrics = {m: _significance(mc, adjusted[(i, m)], config.alpha) for m, mc in pc.metrics.items()}
        out.append(pc.model_copy(update={"metrics": metrics, "holm_family_size": size}))
    return out


def _significance(mc: MetricComparison, p_adjusted: float | None, alpha: float) -> MetricComparison:
    if p_adjusted is None or mc.diff.estimate is None:
        return mc.model_copy(update={"p_adjusted": p_adjusted})
    significant = p_adjusted < alpha and mc.diff.interval(mc.decision_ci).excludes_zero()
    direction: Literal["up", "down", "none"] = (
        "none" if not significant else "up" if mc.diff.estimate > 0 else "down")
    return mc.model_copy(update={"p_adjusted": p_adjusted, "significant": significant, "direction": direction})
