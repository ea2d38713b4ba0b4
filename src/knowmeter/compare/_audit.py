"""Methodology audit: four badges — judges agree, difference significant, saturated, human-aligned.

Each badge is pass / warn / fail with the number behind it, ``not_applicable`` when the check
does not apply (a single judge, a single variant) and ``unknown`` when it applies but was not
measured (no repeats, no gold set). Thresholds: judges agree — min inter-judge Pearson >= 0.7
pass, >= ``judge_dissent`` warn, else fail; human-aligned — Krippendorff α (interval) against
gold >= 0.8 pass, >= 0.667 warn, else fail (Krippendorff's conventional cut-offs), capped at warn
when the gold annotator is also a judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from knowmeter.compare._inputs import CompareConfig
from knowmeter.compare._results import AuditCheck, AuditStatus, MethodologyAudit, PairComparison, VariantSummary
from knowmeter.gold import GoldEvidence

JUDGES_AGREE_PASS = 0.7
ALPHA_PASS, ALPHA_WARN = 0.8, 0.667


def methodology_audit(
    comparisons: Sequence[PairComparison],
    summaries: Mapping[str, VariantSummary],
    config: CompareConfig | None = None,
    gold: GoldEvidence | None = None,
) -> MethodologyAudit:
    """The four audit badges for a run."""
    config = config or CompareConfig()
    return MethodologyAudit(
        judges_agree=_judges(summaries, config),
        difference_significant=_significance(comparisons, config),
        saturated=_saturation(comparisons, summaries),
        human_aligned=_human(gold),
    )


def _judges(summaries: Mapping[str, VariantSummary], config: CompareConfig) -> AuditCheck:
    panels = [(name, s.judge_agreement) for name, s in summaries.items() if s.judge_agreement is not None]
    if not panels:
        return AuditCheck(
            status=AuditStatus.NOT_APPLICABLE, value=None, detail="fewer than two judges: agreement cannot be measured"
        )
    known = [(ja.min_pearson, name) for name, ja in panels if ja.min_pearson is not None]
    constant = [
        name for name, ja in panels if ja.dissent and (ja.min_pearson is None or ja.min_pearson >= config.judge_dissent)
    ]
    if constant:
        return AuditCheck(
            status=AuditStatus.FAIL,
            value=min(known)[0] if known else None,
            detail=f"on {constant[0]} a judge gave every answer the same score while another did not "
            "(Pearson undefined): the judges do not agree on which answers are better",
        )
    if not known:
        return AuditCheck(
            status=AuditStatus.UNKNOWN,
            value=None,
            detail="inter-judge Pearson undefined (too few results or constant scores)",
        )
    worst, name = min(known)
    status = (
        AuditStatus.PASS
        if worst >= JUDGES_AGREE_PASS
        else AuditStatus.WARN
        if worst >= config.judge_dissent
        else AuditStatus.FAIL
    )
    return AuditCheck(
        status=status,
        value=worst,
        detail=f"lowest inter-judge Pearson {worst:.2f} (on {name}); "
        f"pass >= {JUDGES_AGREE_PASS}, fail < {config.judge_dissent}",
    )


def _significance(comparisons: Sequence[PairComparison], config: CompareConfig) -> AuditCheck:
    composites = [(pc.treatment, pc.metrics["composite"]) for pc in comparisons if "composite" in pc.metrics]
    if not comparisons:
        return AuditCheck(status=AuditStatus.NOT_APPLICABLE, value=None, detail="single variant: nothing compared")
    tested = [(mc.p_adjusted, name, mc) for name, mc in composites if mc.p_adjusted is not None]
    if not tested:
        return AuditCheck(status=AuditStatus.UNKNOWN, value=None, detail="no paired composite to test")
    p, name, mc = min(tested, key=lambda item: (item[0], item[1]))
    if mc.significant:
        return AuditCheck(
            status=AuditStatus.PASS,
            value=p,
            detail=f"composite difference significant for {name} (Holm p {p:.3g} < {config.alpha})",
        )
    if mc.p_value is not None and mc.p_value < config.alpha:
        return AuditCheck(
            status=AuditStatus.WARN,
            value=p,
            detail=f"raw p {mc.p_value:.3g} < {config.alpha} for "
            f"{name}, but not after Holm adjustment ({p:.3g}) or the CI includes 0",
        )
    return AuditCheck(
        status=AuditStatus.FAIL,
        value=p,
        detail=f"no composite difference is significant (smallest Holm p {p:.3g}, {name})",
    )


def _saturation(comparisons: Sequence[PairComparison], summaries: Mapping[str, VariantSummary]) -> AuditCheck:
    curves = [pc.saturation for pc in comparisons] if comparisons else [s.saturation for s in summaries.values()]
    called = [c for c in curves if c is not None and c.saturated is not None]
    if not called:
        return AuditCheck(status=AuditStatus.UNKNOWN, value=None, detail="not measured: needs --repeat 2 or more")
    pending = [c for c in called if not c.saturated]
    worst = pending[0] if pending else min(called, key=lambda c: ("low", "medium", "high").index(c.confidence or "low"))
    if not pending:
        status = AuditStatus.WARN if worst.confidence == "low" else AuditStatus.PASS
    else:
        status = AuditStatus.FAIL if worst.confidence == "high" else AuditStatus.WARN
    return AuditCheck(status=status, value=worst.last_narrowing, detail=f"{worst.note} ({worst.confidence} confidence)")


def _human(gold: GoldEvidence | None) -> AuditCheck:
    if gold is None:
        return AuditCheck(
            status=AuditStatus.UNKNOWN,
            value=None,
            detail="no gold set compared (knowmeter gold compare RUN --gold-dir DIR)",
        )
    stored = gold.stored
    if gold.stale is not None:
        return AuditCheck(
            status=AuditStatus.UNKNOWN,
            value=None,
            detail=f"stored gold comparison is out of date: {gold.stale}; run knowmeter gold compare again",
        )
    known = [(c.alpha_interval, name, c) for name, c in stored.comparisons.items() if c.alpha_interval is not None]
    if not known:
        matched = ", ".join(f"{name} {c.n_matched}" for name, c in stored.comparisons.items())
        return AuditCheck(
            status=AuditStatus.UNKNOWN,
            value=None,
            detail=f"Krippendorff α against gold undefined (matched samples: {matched})",
        )
    alpha, name, worst = min(known, key=lambda item: (item[0], item[1]))
    ci = worst.alpha_ci_bca if worst.alpha_ci_bca.low is not None else worst.alpha_ci_percentile
    status = AuditStatus.PASS if alpha >= ALPHA_PASS else AuditStatus.WARN if alpha >= ALPHA_WARN else AuditStatus.FAIL
    shown = "unknown" if ci.low is None or ci.high is None else f"{ci.low:.2f}, {ci.high:.2f}"
    which = f"variant {name}" + (f", the lowest of {len(known)}" if len(known) > 1 else "")
    detail = (
        f"Krippendorff α (interval) {alpha:.2f} [{ci.level:.0%} {ci.method} CI {shown}; B={ci.b}, seed "
        f"{ci.seed}] against {stored.gold.annotator} over {worst.n_matched} of {worst.n_gold} gold samples "
        f"({which}; judges {', '.join(worst.judges) or 'unknown'}; gold {stored.gold.sha256})"
    )
    if worst.contamination_warning:
        status = AuditStatus.WARN if status == AuditStatus.PASS else status
        detail += f"; {worst.contamination_warning}"
    return AuditCheck(status=status, value=alpha, detail=detail, interval=ci, n=worst.n_matched)
