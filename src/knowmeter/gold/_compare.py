"""Agreement of a run's judge scores with a gold set, and the self-audit contamination check."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from knowmeter import defaults
from knowmeter.gold._model import GoldComparison, GoldSet
from knowmeter.stats import (
    BootstrapEstimate,
    krippendorff_alpha,
    krippendorff_alpha_bootstrap,
    mean_abs_diff,
    pearson,
    weighted_kappa,
)

#: Tokens that name a vendor or a role, not a model: sharing one does not make two models the same.
_GENERIC = frozenset(
    {
        "claude",
        "anthropic",
        "openai",
        "gpt",
        "gemini",
        "google",
        "meta",
        "llama",
        "mistral",
        "model",
        "judge",
        "human",
        "annotator",
        "latest",
        "preview",
        "chat",
        "instruct",
        "api",
    }
)


def _model_tokens(name: str) -> set[str]:
    tokens = re.split(r"[^a-z0-9.]+", name.lower())
    return {t for t in tokens if t and re.search(r"[a-z]", t) and t not in _GENERIC}


def contamination_warning(annotator: str, judges: Sequence[str]) -> str | None:
    """A warning when the gold annotator looks like one of the judges (same name, or sharing a
    model-family token such as ``opus`` in ``claude-opus-4-7-1m`` and ``claude:opus``): a model
    cannot audit itself. A heuristic on names; it errs on the side of warning."""
    own = annotator.strip().lower()
    own_tokens = _model_tokens(annotator)
    for judge in judges:
        if judge.strip().lower() == own or own_tokens & _model_tokens(judge):
            return (
                f"the gold annotator {annotator!r} looks like judge {judge!r}: a model grading against its "
                "own annotations overstates agreement; use an independent annotator"
            )
    return None


#: Fewest samples scored by both the judge and the gold set for α and κ to mean anything: one
#: sample shows a difference, never agreement (α and κ came out as 0.00, "poor", from one).
MIN_MATCHED = 2


def _agreement(alpha: float | None) -> Literal["strong", "acceptable", "weak", "poor"] | None:
    if alpha is None:
        return None
    return "strong" if alpha >= 0.8 else "acceptable" if alpha >= 0.667 else "weak" if alpha >= 0.4 else "poor"


def _round_half_up(x: float) -> float:
    return float(math.floor(x + 0.5))


def compare(
    judge_scores_by_sample: Mapping[str, float],
    gold: GoldSet,
    *,
    judges: Sequence[str] = (),
    b: int = defaults.BOOTSTRAP_SAMPLES,
    seed: int = 0,
    level: float = defaults.CI_LEVEL,
) -> GoldComparison:
    """Agreement between per-sample judge scores and the gold scores, over the samples in both
    (α, κ and the agreement label unknown below ``MIN_MATCHED`` of them). NaN / infinite judge
    scores count as missing. ``judges`` (names and models) feed the
    contamination check."""
    gold_scores = gold.scores()
    judged = {s: float(v) for s, v in judge_scores_by_sample.items() if v is not None and math.isfinite(v)}
    matched = sorted(set(gold_scores) & set(judged))
    g = np.array([gold_scores[s] for s in matched], dtype=np.float64)
    j = np.array([judged[s] for s in matched], dtype=np.float64)
    enough = len(matched) >= MIN_MATCHED
    data = np.vstack([g, j]) if enough else np.empty((2, 0))
    boot = BootstrapEstimate.from_result(
        krippendorff_alpha_bootstrap(data, b=b, seed=seed, level=level), n_non_finite=0
    )
    scale = gold.metadata.scale
    rounded = np.clip([_round_half_up(v) for v in j], scale.min, scale.max) if matched else j
    alpha = krippendorff_alpha(data) if enough else None
    return GoldComparison(
        annotator=gold.metadata.annotator,
        judges=sorted(set(judges)),
        scale_min=scale.min,
        scale_max=scale.max,
        n_gold=len(gold_scores),
        n_judged=len(judged),
        n_matched=len(matched),
        missing_in_run=sorted(set(gold_scores) - set(judged)),
        not_in_gold=len(set(judged) - set(gold_scores)),
        alpha_interval=alpha,
        alpha_ordinal=krippendorff_alpha(data, "ordinal") if enough else None,
        alpha_ci_percentile=boot.percentile,
        alpha_ci_bca=boot.bca,
        kappa_quadratic=weighted_kappa(g, rounded) if enough else None,
        pearson=pearson(g, j),
        mean_abs_diff=mean_abs_diff(g, j),
        agreement=_agreement(alpha),
        contamination_warning=contamination_warning(gold.metadata.annotator, judges),
    )
