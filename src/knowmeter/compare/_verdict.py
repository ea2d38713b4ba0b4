"""The verdict: six levels from paired comparisons, layer gates and the variant summaries.

Per (control, treatment) pair, in this order (``rule`` in the result names the branch).
"Significant" is defined by the hierarchical tests of ``compare._pair``: the composite first at
alpha, the layers behind it (or, when the composite is not significant, in the layer safety check).

1. ``composite_regress`` — the composite is significantly lower → REGRESS.
2. The composite is significantly higher and the composites are comparable (same layer sets):
   PROGRESS (``clean_win``) unless one of these holds, in which case CAUTIOUS, naming every one
   that holds (``rule`` = the first): ``layer_regress`` (a layer is significantly lower),
   ``gate_fail`` (a present layer's treatment mean is below the gate, or no layer has a score),
   ``errors_differ`` (the treatment errored significantly more often than the control on the
   tasks both ran — exact McNemar at alpha — so the pairs left out may be its worst answers),
   ``trivial_effect`` (Δ < ``min_effect``), ``judge_dissent`` (inter-judge Pearson <
   ``judge_dissent`` in either arm, or two judges scoring differently while one gives every answer
   the same score), ``few_pairs`` (fewer than ``min_pairs`` paired samples —
   "not yet powered").
3. Otherwise (composite not significantly higher, or not comparable):
   ``gate_dropped`` — a layer passes its gate in the control, fails it in the treatment *and* is
   significantly lower → REGRESS; ``layer_regress`` — a layer is significantly lower → REGRESS;
   ``layer_gain`` — a layer is significantly higher → CAUTIOUS (the composite did not confirm
   it); ``not_comparable`` — composites built from different layer sets → CAUTIOUS;
   ``underpowered`` → UNDERPOWERED when fewer than ``min_pairs`` paired samples or the minimum
   detectable effect at ``power`` exceeds ``max_mde`` (or is unknown); else ``noise`` → NOISE.
   A layer that crossed its gate without a significant drop never makes REGRESS (a point estimate
   is not evidence): the verdict names the gate (``gate_crossed``) and stays what the tests say.

Repeat stability (the share of variance that is run-to-run) and saturation are reported in the
rationale, never rules: the clustered CI and the MDE already carry repeat noise, and a rule on
them made verdicts flip as repeats were added. Several treatments roll up worst-first:
REGRESS > CAUTIOUS > UNDERPOWERED > NOISE > PROGRESS. With no pair at all the verdict is SOLO,
passing when every present layer of every variant meets the gate. Exit code 0 for PROGRESS or a
passing SOLO, else 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from knowmeter import defaults
from knowmeter.compare._inputs import CompareConfig
from knowmeter.compare._results import (
    JudgeAgreement,
    LayerGate,
    MetricComparison,
    PairComparison,
    PairVerdict,
    VariantSummary,
    Verdict,
    VerdictLevel,
)
from knowmeter.exit_codes import EXIT_NOT_PASSED, EXIT_OK
from knowmeter.stats import n_for_effect

_WORST_FIRST = (
    VerdictLevel.REGRESS,
    VerdictLevel.CAUTIOUS,
    VerdictLevel.UNDERPOWERED,
    VerdictLevel.NOISE,
    VerdictLevel.PROGRESS,
)

_SHIP = {
    VerdictLevel.PROGRESS: "SHIP — the treatment is significantly better, every present layer passes its gate "
    "and no warning fired.",
    VerdictLevel.CAUTIOUS: "INVESTIGATE — there is a signal but a warning fired (see the rationale); do not ship "
    "blind.",
    VerdictLevel.REGRESS: "DO NOT SHIP — the treatment is worse on the composite or a layer; check the worst layer, "
    "fix it and re-run.",
    VerdictLevel.NOISE: "NO CALL — the difference is not separable from noise although the run could have "
    "detected a meaningful change; the change does not matter at this size.",
    VerdictLevel.UNDERPOWERED: "INSUFFICIENT DATA — too little paired signal to decide; add samples or repeats "
    "and re-run.",
}


def _num(x: float | None, spec: str = ".2f") -> str:
    return "—" if x is None else format(x, spec)


def _p(x: float | None) -> str:
    return "—" if x is None else f"{x:.2g}" if x < 0.001 else f"{x:.4f}".rstrip("0").rstrip(".")


def decide_verdict(
    comparisons: Sequence[PairComparison],
    summaries: Mapping[str, VariantSummary],
    config: CompareConfig | None = None,
) -> Verdict:
    """The verdict for a run from its (Holm-adjusted) comparisons and per-variant summaries."""
    config = config or CompareConfig()
    if not comparisons:
        return _solo(summaries, config)
    pairs = [_pair_verdict(pc, summaries, config) for pc in comparisons]
    level = next(lv for lv in _WORST_FIRST if any(p.level == lv for p in pairs))
    worst = next(p for p in pairs if p.level == level)
    rationale = list(worst.rationale)
    if len(pairs) > 1:
        rationale += [f"{p.level.value}: {p.treatment} vs {p.control} — {p.headline.split(': ', 1)[-1]}" for p in pairs]
    ship = _SHIP[level]
    if level == VerdictLevel.UNDERPOWERED:
        ship = _more_data(comparisons, config)
    return Verdict(
        level=level,
        headline=worst.headline,
        rationale=rationale,
        ship_recommendation=ship,
        exit_code=EXIT_OK if level == VerdictLevel.PROGRESS else EXIT_NOT_PASSED,
        pairs=pairs,
    )


def _n_decisive(comp: MetricComparison | None, config: CompareConfig) -> int | None:
    """Paired samples (at this run's repeats) that bring the minimum detectable effect down to
    ``max_mde`` — and to at least ``min_pairs`` — so the next run is decisive; None when the
    spread of the per-sample differences is unknown."""
    if comp is None or comp.sd_diff is None:
        return None
    n = n_for_effect(config.max_mde, comp.sd_diff, alpha=config.alpha, power=config.power)
    return None if n is None else max(n, config.min_pairs)


def _more_data(comparisons: Sequence[PairComparison], config: CompareConfig) -> str:
    """UNDERPOWERED's recommendation, with the samples that would make the run decisive."""
    needed = [_n_decisive(pc.metrics.get("composite"), config) for pc in comparisons]
    have = max((pc.metrics["composite"].n_samples for pc in comparisons if "composite" in pc.metrics), default=0)
    if not needed or any(n is None for n in needed):
        return _SHIP[VerdictLevel.UNDERPOWERED]
    n = max(n for n in needed if n is not None)
    return (
        f"INSUFFICIENT DATA — too little paired signal to decide; about {n} paired samples (this run has {have}) "
        f"would bring the minimum detectable effect to max_mde {config.max_mde:g} — add samples, or repeats, "
        "and re-run."
    )


def _solo(summaries: Mapping[str, VariantSummary], config: CompareConfig) -> Verdict:
    lines, passing = [], bool(summaries)
    for name, s in summaries.items():
        layers = {m: est.estimate for m, est in s.metrics.items() if m in defaults.LAYERS and est.estimate is not None}
        ok = bool(layers) and all(v >= config.threshold for v in layers.values())
        passing = passing and ok
        shown = ", ".join(f"{m} {v:.2f}{'' if v >= config.threshold else ' ✗'}" for m, v in layers.items())
        lines.append(
            f"{'PASS' if ok else 'FAIL'}: {name} · {shown or 'no layered scores'} "
            f"(gate ≥ {config.threshold}; {s.n_scored} scored results from {s.n_samples} samples)"
        )
        lines += [line for line in (_stability_line(name, s), _judge_line(name, s)) if line]
    if not summaries:
        lines.append("FAIL: no results to judge")
    headline = f"SOLO · single variant, layer gate {'PASS' if passing else 'FAIL'} @ threshold {config.threshold}"
    rec = (
        "PASSES ITS GATE — but nothing to compare against; add a control variant to measure the change."
        if passing
        else "FAILS ITS GATE — a present layer is below the threshold (or no layer was scored); "
        "add a control variant to measure the change."
    )
    return Verdict(
        level=VerdictLevel.SOLO,
        headline=headline,
        rationale=lines,
        ship_recommendation=rec,
        exit_code=EXIT_OK if passing else EXIT_NOT_PASSED,
        pairs=[],
    )


def _significant(mc: MetricComparison | None, sign: int) -> bool:
    return bool(mc and mc.significant and mc.diff.estimate is not None and mc.diff.estimate * sign > 0)


def _pair_verdict(pc: PairComparison, summaries: Mapping[str, VariantSummary], config: CompareConfig) -> PairVerdict:
    comp = pc.metrics.get("composite")
    layers = [pc.metrics[m] for m in defaults.LAYERS if m in pc.metrics]
    down = [mc for mc in layers if _significant(mc, -1)]
    up = [mc for mc in layers if _significant(mc, +1)]
    arms = [summaries[v] for v in (pc.control, pc.treatment) if v in summaries]
    reasons: list[tuple[str, str]] = []
    if _significant(comp, -1):
        level = VerdictLevel.REGRESS
        reasons.append(("composite_regress", "the composite is significantly lower"))
    elif pc.composite_comparable and _significant(comp, +1):
        assert comp is not None and comp.diff.estimate is not None
        reasons = _cautions(pc, comp, down, arms, config)
        level = VerdictLevel.CAUTIOUS if reasons else VerdictLevel.PROGRESS
        if not reasons:
            reasons.append(("clean_win", "the composite is significantly higher and no warning fired"))
    else:
        level, reasons = _no_composite_win(pc, comp, down, up, config)
    rule, why = reasons[0]
    rationale = _rationale(pc, comp, arms, config)
    rationale.append(f"{level.value} because: " + "; ".join(text for _, text in reasons))
    return PairVerdict(
        control=pc.control,
        treatment=pc.treatment,
        level=level,
        rule=rule,
        headline=f"{level.value} · {pc.treatment} vs {pc.control}: {_headline(comp)} — {why}",
        rationale=rationale,
    )


def _cautions(
    pc: PairComparison,
    comp: MetricComparison,
    down: list[MetricComparison],
    arms: list[VariantSummary],
    config: CompareConfig,
) -> list[tuple[str, str]]:
    out = [
        (
            "layer_regress",
            f"layer {mc.metric} is significantly lower (Δ {_num(mc.diff.estimate, '+.2f')}, "
            f"adjusted p {_p(mc.p_adjusted)})",
        )
        for mc in down
    ]
    failed = [g for g in pc.gates if g.treatment_pass is False]
    if failed:
        out.append(
            (
                "gate_fail",
                "treatment below the layer gate on "
                + ", ".join(f"{g.layer} ({_num(g.treatment_mean)} < {g.threshold})" for g in failed),
            )
        )
    elif all(g.treatment_mean is None for g in pc.gates):
        out.append(("gate_fail", "the treatment has no layered score to gate"))
    eb = pc.errors
    if eb.treatment_only > eb.control_only and eb.p_value is not None and eb.p_value < config.alpha:
        out.append(
            (
                "errors_differ",
                f"the treatment errored on {eb.treatment_only} paired task(s) where the control did not "
                f"(the control on {eb.control_only}; exact McNemar p {_p(eb.p_value)}): pairs with an error "
                "are left out, so the gain may come from dropping the treatment's failures",
            )
        )
    assert comp.diff.estimate is not None
    if comp.diff.estimate < config.min_effect:
        out.append(
            ("trivial_effect", f"the gain {comp.diff.estimate:+.3f} is below the minimum effect {config.min_effect}")
        )
    out += [
        ("judge_dissent", _dissent(s.variant, s.judge_agreement))
        for s in arms
        if s.judge_agreement and s.judge_agreement.dissent
    ]
    if comp.n_samples < config.min_pairs:
        out.append(("few_pairs", f"only {comp.n_samples} paired samples (< {config.min_pairs}): not yet powered"))
    return out


def _dissent(variant: str, ja: JudgeAgreement) -> str:
    if ja.min_pearson is not None and ja.min_pearson < ja.dissent_threshold:
        return (
            f"judges disagree on {variant} (min Pearson {_num(ja.min_pearson)} < {ja.dissent_threshold}): "
            "the judge signal is unreliable"
        )
    pair = next(p for p in ja.pairs if p.n >= 2 and p.pearson is None and p.mean_abs_diff)
    return (
        f"judges disagree on {variant}: {pair.judge_a} and {pair.judge_b} differ by {_num(pair.mean_abs_diff)} "
        "points on average while one of them gave every answer the same score (Pearson undefined): "
        "the judge signal is unreliable"
    )


def _no_composite_win(
    pc: PairComparison,
    comp: MetricComparison | None,
    down: list[MetricComparison],
    up: list[MetricComparison],
    config: CompareConfig,
) -> tuple[VerdictLevel, list[tuple[str, str]]]:
    crossed = {g.layer: g for g in pc.gates if g.control_pass and g.treatment_pass is False}
    if down:
        return VerdictLevel.REGRESS, [
            (
                "gate_dropped" if mc.metric in crossed else "layer_regress",
                f"layer {mc.metric} is significantly lower (Δ {_num(mc.diff.estimate, '+.2f')}, adjusted p "
                f"{_p(mc.p_adjusted)})"
                + (f" and fell below its gate ({_gate_move(crossed[mc.metric])})" if mc.metric in crossed else ""),
            )
            for mc in down
        ]
    level, reasons = _no_signal(pc, comp, up, config)
    reasons += [
        (
            "gate_crossed",
            f"{g.layer} fell below its gate ({_gate_move(g)}) but the drop is not "
            f"significant (adjusted p {_p(_adjusted(pc, g.layer))}): not called a regression",
        )
        for g in crossed.values()
    ]
    return level, reasons


def _no_signal(
    pc: PairComparison, comp: MetricComparison | None, up: list[MetricComparison], config: CompareConfig
) -> tuple[VerdictLevel, list[tuple[str, str]]]:
    if up:
        return VerdictLevel.CAUTIOUS, [
            (
                "layer_gain",
                f"layer {mc.metric} is significantly higher (Δ "
                f"{_num(mc.diff.estimate, '+.2f')}) but the composite "
                "did not confirm it",
            )
            for mc in up
        ]
    if not pc.composite_comparable:
        return VerdictLevel.CAUTIOUS, [("not_comparable", pc.comparability_note or "composites not comparable")]
    weak = _underpowered(comp, config)
    if weak:
        return VerdictLevel.UNDERPOWERED, [("underpowered", text) for text in weak]
    if comp is not None and comp.sd_diff == 0 and comp.diff.estimate == 0:
        # the t-based MDE is 0 here, which would claim any change is detectable: say what was seen
        return VerdictLevel.NOISE, [
            (
                "noise",
                f"every one of the {comp.n_samples} paired samples scored the same under both variants "
                "(the per-sample differences have no variance)",
            )
        ]
    mde = _num(comp.mde if comp else None)
    return VerdictLevel.NOISE, [
        (
            "noise",
            f"{_not_significant(comp)} although a change of {mde} points was detectable ({config.power:.0%} power)",
        )
    ]


def _not_significant(comp: MetricComparison | None) -> str:
    """Why the composite is not significant: significance needs both its CI to exclude 0 and its
    (Holm-adjusted) permutation p below alpha, so name the one that did not hold."""
    if comp is None:
        return "no paired composite"
    ci = comp.diff.interval(comp.decision_ci)
    if ci.low is None or ci.high is None:
        return "the composite's CI is unknown"
    if ci.excludes_zero():
        return (
            f"the composite's CI [{_num(ci.low, '+.2f')}, {_num(ci.high, '+.2f')}] excludes 0 but its permutation "
            f"test is not significant (adjusted p {_p(comp.p_adjusted)})"
        )
    return f"the composite's CI [{_num(ci.low, '+.2f')}, {_num(ci.high, '+.2f')}] spans 0"


def _gate_move(g: LayerGate) -> str:
    return f"{_num(g.control_mean)} → {_num(g.treatment_mean)}, gate {g.threshold}"


def _adjusted(pc: PairComparison, layer: str) -> float | None:
    mc = pc.metrics.get(layer)
    return mc.p_adjusted if mc else None


def _underpowered(comp: MetricComparison | None, config: CompareConfig) -> list[str]:
    n = comp.n_samples if comp else 0
    out = []
    if n < config.min_pairs:
        out.append(f"only {n} paired, scored samples (< {config.min_pairs})")
    if comp is None or comp.mde is None:
        out.append("the minimum detectable effect is unknown")
    elif comp.mde > config.max_mde:
        out.append(
            f"the minimum detectable effect at {config.power:.0%} power is {comp.mde:.2f} points "
            f"(> {config.max_mde}); about N = {_n_decisive(comp, config)} samples would bring it to {config.max_mde:g}"
            + (
                f" (the observed effect, {_num(comp.diff.estimate, '+.2f')}, would need N = {comp.n_needed})"
                if comp.n_needed
                else ""
            )
        )
    return out


def _headline(comp: MetricComparison | None) -> str:
    if comp is None or comp.diff.estimate is None:
        return "no paired composite"
    ci = comp.diff.interval(comp.decision_ci)
    return (
        f"Δcomposite {comp.diff.estimate:+.2f} [{_num(ci.low, '+.2f')}, {_num(ci.high, '+.2f')}], "
        f"Holm p {_p(comp.p_adjusted)}, {comp.n_samples} paired samples"
    )


def _metric_line(mc: MetricComparison) -> str:
    ci = mc.diff.interval(mc.decision_ci)
    method = "BCa" if ci.method == "bca" else "percentile"
    return (
        f"{mc.metric}: {_num(mc.control_mean)} → {_num(mc.treatment_mean)}, Δ {_num(mc.diff.estimate, '+.2f')} "
        f"[{ci.level:.0%} {method} CI {_num(ci.low, '+.2f')}, {_num(ci.high, '+.2f')}; B={ci.b}, seed {ci.seed}]; "
        f"permutation p {_p(mc.p_value)} (adjusted {_p(mc.p_adjusted)} in family {mc.family}); d_z {_num(mc.d_z)}, "
        f"g_av {_num(mc.hedges_g_av)}; {mc.n_pairs} pairs from {mc.n_samples} samples"
    )


def _rationale(
    pc: PairComparison, comp: MetricComparison | None, arms: list[VariantSummary], config: CompareConfig
) -> list[str]:
    lines = [_metric_line(mc) for mc in pc.metrics.values()]
    lines += [
        f"tests, family {f.name}: {', '.join(f.metrics)} at alpha {f.level:.3g}"
        + (" (the sequential look's level)" if config.sequential_alpha is not None else "")
        + f", {f.method}"
        + (f"; {f.gate}" if f.gate else "")
        for f in pc.families
    ]
    for g in pc.gates:

        def state(passed: bool | None) -> str:
            return "—" if passed is None else "PASS" if passed else "FAIL"

        lines.append(
            f"gate {g.layer} ≥ {g.threshold}: control {_num(g.control_mean)} {state(g.control_pass)}, "
            f"treatment {_num(g.treatment_mean)} {state(g.treatment_pass)}"
        )
    if pc.comparability_note:
        lines.append(pc.comparability_note)
    if comp is not None:
        d = comp.dropped
        if d.total:
            parts = [
                f"{count} {label}"
                for count, label in (
                    (d.missing_control, "missing in control"),
                    (d.missing_treatment, "missing in treatment"),
                    (d.error, "errored"),
                    (d.absent, "unscored"),
                    (d.non_finite, "NaN/inf"),
                    (d.layer_mismatch, "layer sets differ"),
                )
                if count
            ]
            lines.append(f"dropped from the composite: {d.total} ({', '.join(parts)})")
        eb = pc.errors
        if eb.control_only or eb.treatment_only:
            lines.append(
                f"errors on paired tasks: only the control on {eb.control_only}, only the treatment on "
                f"{eb.treatment_only}, both on {eb.both} (exact McNemar p {_p(eb.p_value)})"
            )
        need = f"; the observed effect would need N = {comp.n_needed} samples" if comp.n_needed else ""
        lines.append(
            f"power: minimum detectable effect at {config.power:.0%} = {_num(comp.mde)} points (sd of "
            f"per-sample differences {_num(comp.sd_diff)}, {comp.n_samples} samples){need}"
        )
    for s in arms:
        lines += [line for line in (_stability_line(s.variant, s), _judge_line(s.variant, s)) if line]
    if pc.saturation is not None:
        sat = pc.saturation
        lines.append(f"saturation: {sat.note}" + (f" ({sat.confidence} confidence)" if sat.confidence else ""))
    return lines


def _stability_line(name: str, s: VariantSummary) -> str:
    st = s.stability
    if st is None:
        return f"stability of {name}: not measured (single run; use --repeat 2 or more)"
    if st.repeat_share is None:
        return f"stability of {name}: no variance at all across {st.n} results from {st.n_samples} samples"
    warn = (
        f" — note: above the limit {st.limit:.0%} (reported, never a rule of the verdict): most of the spread "
        "is run-to-run; the clustered CI includes it, more repeats narrow it"
        if st.stable is False
        else f" (limit {st.limit:.0%})"
    )
    return (
        f"stability of {name}: {st.repeat_share:.0%} of the composite's variance is between repeats "
        f"(ICC {_num(st.icc)}) over {st.n_samples} samples{warn}"
    )


def _judge_line(name: str, s: VariantSummary) -> str | None:
    ja = s.judge_agreement
    if ja is None:
        return None
    return (
        f"judges on {name}: min Pearson {_num(ja.min_pearson)}, Krippendorff α "
        f"{_num(ja.krippendorff_alpha_interval)} over {ja.n_results} results ({', '.join(ja.judges)})"
    )
