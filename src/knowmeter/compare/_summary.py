"""One variant on its own: per-layer means with bootstrap CIs, pass rate, repeats, judge agreement."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from knowmeter.compare._align import Arm, value
from knowmeter.compare._inputs import METRICS, CompareConfig, Observation
from knowmeter.compare._results import (
    JudgeAgreement,
    JudgePairAgreement,
    PassRate,
    RepeatStability,
    VariantSummary,
)
from knowmeter.compare._saturation import announce_saturation, saturation_curve
from knowmeter.stats import (
    BootstrapEstimate,
    FloatArray,
    announce_means,
    bootstrap_means,
    finite,
    krippendorff_alpha,
    mean_abs_diff,
    pearson,
    repeat_variance,
    wilson_clustered,
)


@dataclass(frozen=True)
class ArmScores:
    """One variant's observations (``Arm``) and what its summary resamples: the scored
    observations' sample ids, their metric matrix (NaN: no score) and the columns of the metrics
    some observation has. Made once per variant, for the announcement and the summary."""

    arm: Arm
    scored: list[Observation]
    samples: list[str]
    matrix: FloatArray
    present: list[int]

    @classmethod
    def of(cls, arm: Arm) -> ArmScores:
        scored = arm.scored
        rows: dict[int, list[float]] = {}  # observations share their score maps: one row per map
        matrix = np.array(
            [rows.get(id(o.scores)) or rows.setdefault(id(o.scores), [value(o, m) for m in METRICS]) for o in scored]
        ).reshape(len(scored), len(METRICS))
        present = [j for j, m in enumerate(METRICS) if any(o.score(m) is not None for o in scored)]
        return cls(arm, scored, [o.sample_id for o in scored], matrix, present)


def announce_summary(scores: ArmScores, config: CompareConfig) -> None:
    """Inside ``shared_resamples``: ``summarize_arm`` will resample these metric means and
    their saturation (``knowmeter.stats.announce_means``), so one draw of the same resamples
    serves them all."""
    samples, matrix, present = scores.samples, scores.matrix, scores.present
    if present:
        announce_means(matrix[:, present], samples, b=config.bootstrap_samples, seed=config.seed)
    if 0 in present:  # the composite's saturation curve
        announce_saturation(matrix[:, 0], samples, [o.repeat for o in scores.scored], config)


def summarize_variant(
    variant: str, observations: Iterable[Observation], config: CompareConfig | None = None
) -> VariantSummary:
    """Summarise ``variant`` from its observations (observations of other variants are ignored).

    Errored results are counted in ``n_errors`` and left out of every mean; NaN / infinite
    scores are left out and counted per metric (``n_non_finite``).
    """
    return summarize_arm(ArmScores.of(Arm.build(variant, observations)), config or CompareConfig())


def summarize_arm(scores: ArmScores, config: CompareConfig) -> VariantSummary:
    """``summarize_variant`` of one variant's observations (its ``ArmScores``)."""
    arm, scored, samples, matrix, present = scores.arm, scores.scored, scores.samples, scores.matrix, scores.present
    results = (
        bootstrap_means(
            matrix[:, present], samples, b=config.bootstrap_samples, seed=config.seed, level=config.ci_level
        )
        if present
        else []
    )
    metrics = {
        METRICS[j]: BootstrapEstimate.from_result(r, n_non_finite=_non_finite(scored, METRICS[j]))
        for j, r in zip(present, results, strict=True)
    }
    composite = metrics.get("composite")
    saturation = None
    if composite is not None and composite.n:
        saturation = saturation_curve("composite", matrix[:, 0], samples, [o.repeat for o in scored], composite, config)
    return VariantSummary(
        variant=arm.variant,
        n_results=len(arm.by_key),
        n_samples=len({k[0] for k in arm.by_key}),
        repeats=max(Counter(k[0] for k in arm.by_key).values(), default=0),
        n_errors=len(arm.by_key) - len(scored),
        n_duplicates=arm.duplicates,
        n_scored=composite.n if composite else 0,
        layer_sets=_layer_sets(scored),
        metrics=metrics,
        pass_rate=_pass_rate(scored, config.ci_level),
        stability=repeat_stability(scored, config.stability_limit),
        judge_agreement=judge_agreement(scored, config.judge_dissent),
        saturation=saturation,
    )


def _non_finite(scored: list[Observation], metric: str) -> int:
    """Scores given as NaN / infinite (excluded from the mean, counted)."""
    return sum(1 for o in scored if (v := o.score(metric)) is not None and not math.isfinite(v))


def _layer_sets(scored: list[Observation]) -> dict[str, int]:
    """How many results were scored from which layer set ("none": no layer at all)."""
    counts = Counter("+".join(o.layer_set) or "none" for o in scored)
    return dict(sorted(counts.items()))


def _pass_rate(scored: list[Observation], level: float) -> PassRate | None:
    by_sample: dict[str, list[bool]] = {}
    for o in scored:
        if o.passed is not None:
            by_sample.setdefault(o.sample_id, []).append(o.passed)
    outcomes = list(by_sample.values())
    r = wilson_clustered([sum(v) for v in outcomes], [len(v) for v in outcomes], level)
    if r is None:
        return None
    repeated = any(len(v) > 1 for v in outcomes)
    return PassRate(
        passed=r.successes,
        n=r.n,
        n_samples=r.n_clusters,
        rate=r.rate,
        low=r.low,
        high=r.high,
        level=level,
        design_effect=r.design_effect,
        effective_n=r.effective_n,
        method="wilson_clustered" if repeated else "wilson",
    )


def repeat_stability(scored: list[Observation], limit: float, metric: str = "composite") -> RepeatStability | None:
    """Share of ``metric``'s variance that lies between the repeats of a sample (1 - ICC(1));
    None when no sample has two scored repeats."""
    pairs = [(o.sample_id, v) for o in scored if math.isfinite(v := value(o, metric))]
    r = repeat_variance([v for _, v in pairs], [s for s, _ in pairs]) if pairs else None
    if r is None:
        return None
    by_sample: dict[str, list[float]] = {}
    for sample, v in pairs:
        by_sample.setdefault(sample, []).append(v)
    per_sample = {s: float(np.std(v, ddof=1)) if len(v) >= 2 else None for s, v in sorted(by_sample.items())}
    share = r.repeat_share
    return RepeatStability(
        metric=metric,
        n_samples=r.n_samples,
        n=r.n,
        icc=r.icc,
        repeat_share=share,
        limit=limit,
        stable=None if share is None else share <= limit,
        per_sample_sd=per_sample,
    )


def judge_agreement(scored: list[Observation], dissent_threshold: float) -> JudgeAgreement | None:
    """Agreement between judges across results (each result = one judged answer); None with
    fewer than two judges."""
    judges = sorted({name for o in scored for name in o.judge_scores})
    if len(judges) < 2:
        return None
    ratings = np.array([[_judge_value(o, j) for o in scored] for j in judges]).reshape(len(judges), len(scored))
    pairs = []
    for (a, ra), (b, rb) in itertools.combinations(zip(judges, ratings, strict=True), 2):
        both = int(np.sum(np.isfinite(ra) & np.isfinite(rb)))
        pairs.append(
            JudgePairAgreement(
                judge_a=a, judge_b=b, n=both, pearson=pearson(ra, rb), mean_abs_diff=mean_abs_diff(ra, rb)
            )
        )
    known = [p.pearson for p in pairs if p.pearson is not None]
    min_pearson = min(known) if known else None
    verdicts = [v for v in (_pair_dissents(p, dissent_threshold) for p in pairs) if v is not None]
    return JudgeAgreement(
        judges=judges,
        n_results=int(np.sum(np.sum(np.isfinite(ratings), axis=0) >= 2)),
        pairs=pairs,
        min_pearson=min_pearson,
        krippendorff_alpha_interval=finite(krippendorff_alpha(ratings)),
        dissent_threshold=dissent_threshold,
        dissent=any(verdicts) if verdicts else None,
    )


def _pair_dissents(pair: JudgePairAgreement, threshold: float) -> bool | None:
    """Whether two judges disagree (None: fewer than two answers scored by both). Pearson is
    undefined when one of them gave every answer the same score: then they agree only if they
    gave the same scores, since a judge that ranks nothing cannot confirm the other's ranking."""
    if pair.n < 2:
        return None
    if pair.pearson is not None:
        return pair.pearson < threshold
    return bool(pair.mean_abs_diff)


def _judge_value(obs: Observation, judge: str) -> float:
    v = obs.judge_scores.get(judge)
    return float("nan") if v is None else float(v)
