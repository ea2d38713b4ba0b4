"""What the comparison returns. Every model serialises to JSON (``model_dump_json``); an unknown
number is ``None``, never 0 or NaN."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import ConfigDict, computed_field

from knowmeter._stored import StoredModel
from knowmeter.compare._inputs import CompareConfig
from knowmeter.stats import BootstrapEstimate, ConfidenceInterval


class _Model(StoredModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PassRate(_Model):
    """Share of results whose assertions all passed, with a Wilson interval.

    With repeats the results of one sample are correlated, so the interval is the clustered one
    (``wilson_clustered``: Wilson on the effective sample size ``n / design_effect``); without
    repeats it is the plain Wilson interval (``design_effect`` 1). ``low`` / ``high`` are None
    when the interval cannot be estimated (one sample with several repeats)."""

    passed: int
    n: int
    n_samples: int
    rate: float | None
    low: float | None
    high: float | None
    level: float
    design_effect: float | None
    effective_n: float | None
    method: Literal["wilson", "wilson_clustered"] = "wilson"


class RepeatStability(_Model):
    """How much of the composite's spread is run-to-run noise: a one-way ANOVA over samples
    (ICC(1); ``repeat_share`` = 1 - ICC). ``stable`` is False when ``repeat_share`` exceeds
    ``limit`` — a warning, never a verdict rule (the clustered CI already carries repeat noise).
    ``per_sample_sd`` is the sd across each sample's repeats (flaky samples stand out)."""

    metric: str
    n_samples: int
    n: int
    icc: float | None
    repeat_share: float | None
    limit: float
    stable: bool | None
    per_sample_sd: dict[str, float | None]


class JudgePairAgreement(_Model):
    judge_a: str
    judge_b: str
    n: int
    pearson: float | None
    mean_abs_diff: float | None


class JudgeAgreement(_Model):
    """Agreement between judges over the results both scored (>= 2 judges only)."""

    judges: list[str]
    n_results: int
    pairs: list[JudgePairAgreement]
    min_pearson: float | None
    krippendorff_alpha_interval: float | None
    dissent_threshold: float
    dissent: bool | None


class SaturationPoint(_Model):
    repeats: int
    n: int
    ci_width: float | None


class Saturation(_Model):
    """CI width over cumulative repeats (repeat 0, 0–1, 0–2, …) and whether more repeats still
    narrow it. ``saturated`` / ``confidence`` are None when fewer than two repeats were run."""

    metric: str
    method: Literal["percentile", "bca"]
    points: list[SaturationPoint]
    tolerance: float
    last_narrowing: float | None
    saturated: bool | None
    confidence: Literal["low", "medium", "high"] | None
    note: str


class VariantSummary(_Model):
    """One variant on its own: per-layer means with CIs, pass rate, stability, judge agreement."""

    variant: str
    n_results: int
    n_samples: int
    repeats: int
    n_errors: int
    n_duplicates: int
    n_scored: int
    layer_sets: dict[str, int]
    metrics: dict[str, BootstrapEstimate]
    pass_rate: PassRate | None
    stability: RepeatStability | None
    judge_agreement: JudgeAgreement | None
    saturation: Saturation | None


class DropCounts(_Model):
    """Why aligned (sample, repeat) keys did not become a pair for one metric."""

    missing_control: int = 0
    missing_treatment: int = 0
    error: int = 0
    absent: int = 0
    non_finite: int = 0
    layer_mismatch: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total(self) -> int:
        return (
            self.missing_control
            + self.missing_treatment
            + self.error
            + self.absent
            + self.non_finite
            + self.layer_mismatch
        )


class PermutationTest(_Model):
    p_value: float | None
    method: Literal["exact", "monte_carlo"] | None
    n_permutations: int
    seed: int | None


class MetricComparison(_Model):
    """Paired comparison of one metric (treatment − control) over the samples scored in both.

    Effect sizes and power use per-sample mean differences (repeats averaged within a sample):
    ``d_z`` = mean / sd of those differences, ``hedges_g_av`` = mean difference over the average
    of the two arms' sds times the exact Hedges correction (df = samples − 1), ``mde`` = minimum
    detectable effect at the configured power, ``n_needed`` = samples the observed effect would
    need. ``p_adjusted`` is adjusted within ``family`` (see ``HypothesisFamily``); ``significant``:
    adjusted p < alpha *and* the decision CI excludes 0.
    """

    metric: str
    family: Literal["composite", "layers", "layer_safety_check"]
    n_pairs: int
    n_samples: int
    dropped: DropCounts
    control_mean: float | None
    treatment_mean: float | None
    diff: BootstrapEstimate
    decision_ci: Literal["percentile", "bca"]
    permutation: PermutationTest
    p_value: float | None
    p_adjusted: float | None
    significant: bool | None
    direction: Literal["up", "down", "none"] | None
    sd_diff: float | None
    d_z: float | None
    hedges_g_av: float | None
    mde: float | None
    n_needed: int | None


class McNemarTest(_Model):
    """Exact McNemar test on paired pass/fail (``passed``). With repeats, (sample, repeat) pairs
    are treated as independent — see ``note``."""

    n_pairs: int
    both: int
    control_only: int
    treatment_only: int
    neither: int
    p_value: float | None
    note: str | None


class ErrorBalance(_Model):
    """Which arm errored on the samples both ran: pairs with an errored side are left out of every
    metric, so errors concentrated in one arm can drop that arm's worst answers. Exact McNemar
    test of the pairs where exactly one side errored, repeats counted as independent pairs
    (``p_value`` None when the arms share no pair)."""

    n_pairs: int
    control_only: int
    treatment_only: int
    both: int
    p_value: float | None


class LayerGate(_Model):
    """Layer gate: the layer's mean over all scored results of each arm against ``threshold``."""

    layer: str
    threshold: float
    control_mean: float | None
    treatment_mean: float | None
    control_pass: bool | None
    treatment_pass: bool | None


class HypothesisFamily(_Model):
    """A family of hypotheses and how it was adjusted: the composite first at ``level`` (Holm
    across treatments), then — only when the composite was significant — the layers (Holm at
    ``level``, serial gatekeeping). When the composite was not significant the layers are a
    separate ``layer_safety_check`` family at half the level: it can name a regressing or gaining
    layer (REGRESS / CAUTIOUS) but never produce PROGRESS. ``level`` is the level each family is
    tested at (alpha, or its share)."""

    name: Literal["composite", "layers", "layer_safety_check"]
    metrics: list[str]
    level: float
    method: str
    gate: str | None


class PairComparison(_Model):
    """A treatment against the control."""

    control: str
    treatment: str
    n_control: int
    n_treatment: int
    layers_control: list[str]
    layers_treatment: list[str]
    composite_comparable: bool
    comparability_note: str | None
    metrics: dict[str, MetricComparison]
    mcnemar: McNemarTest | None
    errors: ErrorBalance
    gates: list[LayerGate]
    saturation: Saturation | None
    families: list[HypothesisFamily]


class VerdictLevel(StrEnum):
    PROGRESS = "PROGRESS"
    CAUTIOUS = "CAUTIOUS"
    REGRESS = "REGRESS"
    NOISE = "NOISE"
    UNDERPOWERED = "UNDERPOWERED"
    SOLO = "SOLO"


class PairVerdict(_Model):
    """The verdict for one pair; ``rule`` names the decision rule that fired."""

    control: str
    treatment: str
    level: VerdictLevel
    rule: str
    headline: str
    rationale: list[str]


class Verdict(_Model):
    """The run's verdict: the worst pair's level (REGRESS > CAUTIOUS > UNDERPOWERED > NOISE >
    PROGRESS), or SOLO for a single variant. ``exit_code`` is the verdict's own, 0 for PROGRESS or
    a passing SOLO: an input of the run's decision (``knowmeter.decision``), whose ``exit_code``
    is the one a command exits with."""

    level: VerdictLevel
    headline: str
    rationale: list[str]
    ship_recommendation: str
    exit_code: int
    pairs: list[PairVerdict]


class AuditStatus(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    NOT_APPLICABLE = "not_applicable"
    UNKNOWN = "unknown"


class AuditCheck(_Model):
    """One badge. ``interval`` and ``n`` say how sure ``value`` is, when the check measures that
    (human-aligned: the CI of α and the gold samples matched)."""

    status: AuditStatus
    value: float | None
    detail: str
    interval: ConfidenceInterval | None = None
    n: int | None = None


class MethodologyAudit(_Model):
    """The four badges: each pass / warn / fail with the number behind it, or not applicable /
    unknown when it cannot be judged (never a fake pass)."""

    judges_agree: AuditCheck
    difference_significant: AuditCheck
    saturated: AuditCheck
    human_aligned: AuditCheck


class Analysis(_Model):
    """Everything ``analyze`` computed from stored observations."""

    config: CompareConfig
    control: str | None
    treatments: list[str]
    summaries: dict[str, VariantSummary]
    comparisons: list[PairComparison]
    verdict: Verdict
    audit: MethodologyAudit
