"""``report.json`` as one typed model: the report stage builds a ``Report`` and every reader
(terminal, gates, index, HTML, CI outputs, viewer) reads its attributes. ``Report.to_dict()``
is the JSON form written to disk; ``report.schema.json`` is generated from these models
(``knowmeter.report._schema``).

The statistics, verdict and audit are the comparison's own models (``knowmeter.compare``), the
gap and coverage rows the analysis records, the decision ``report._decision``'s (``knowmeter.decision``
decides it): one type per thing, whether it is computed or read back."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, PrivateAttr, computed_field, field_serializer

from knowmeter._stored import StoredModel
from knowmeter.analysis import Coverage, GapSummary
from knowmeter.compare import (
    CompareConfig,
    MethodologyAudit,
    PairComparison,
    ResourceComparison,
    SequentialRecord,
    Verdict,
)
from knowmeter.compare import (
    VariantSummary as VariantStatistics,
)
from knowmeter.config import RunConfig
from knowmeter.gates import Gates
from knowmeter.report._decision import Decision, Incompleteness, incompleteness
from knowmeter.report._rows import RowIndex
from knowmeter.stats import BootstrapResult
from knowmeter.store import (
    BudgetStatus,
    ControlReused,
    Git,
    JoinedTasks,
    JudgeInfo,
    MergedShard,
    RunExecutor,
    SampleSetInfo,
    ShardInfo,
    StoredTasks,
    SubsetInfo,
    TaskJSON,
    TaskRecord,
)
from knowmeter.watermark import Watermark

#: The version of report.json this code writes and reads.
#: 1: knowmeter 0.1.0, before the typed ``Report``; 2: this model, its JSON Schema generated, every
#: task record repeated in ``tasks``; 3: the task records are stored once, in the run's
#: results.jsonl that ``tasks_file`` names (``read_report`` joins them; a version 2 file is still read).
REPORT_SCHEMA_VERSION = 3
#: The older version ``read_report`` still reads (its tasks are embedded).
REPORT_SCHEMA_EMBEDDED_TASKS = 2


class _M(StoredModel):
    pass


class ExecutorInfo(RunExecutor):
    """Who produced the answers (run.json's ``executor``), and what kind of agent that is."""

    label: str = Field(description="What kind of agent produced the answers, as far as knowmeter knows.")


class Partial(_M):
    """Why a run's report covers only part of its planned tasks."""

    reason: str
    tasks_missing: int = Field(ge=0)
    variants_without_results: list[str]


class RunInfo(_M):
    """Run metadata: provenance, settings, watermark, budget, timings."""

    id: str
    created_at: str
    finished_at: str | None
    status: str | None
    reported_at: str
    versions: dict[str, str]
    git: Git
    executor: ExecutorInfo
    seed: int
    watermark: Watermark
    sample_set: SampleSetInfo | None = Field(
        default=None,
        description="The sample set's kind (human / probe / mixed); None for runs made before "
        "knowmeter recorded it (their samples were written by people).",
    )
    config: RunConfig = Field(description="The run's configuration as stored in run.json (secrets redacted).")
    budget: BudgetStatus | None
    tasks_total: int = Field(ge=0)
    tasks_done: int = Field(ge=0)
    tasks_missing: int
    results_problems: list[str] | None = Field(
        default=None,
        description="Lines of results.jsonl that were not counted (cut off, not JSON) and tasks "
        "stored more than once (counted once).",
    )
    partial: Partial | None = Field(
        default=None,
        description="Set when the run stopped early (budget, interruption, kill): the report "
        "covers only the tasks that finished.",
    )
    wall_s: float | None
    judges: list[JudgeInfo] = Field(description="Configured judges (name, executor, model).")
    prompt_hashes: dict[str, str] = Field(description="Hashes of the judge and judge-backed metric prompts.")
    shard: ShardInfo | None = Field(
        default=None,
        description="Set for a run of one shard of a plan (eval --shard I/N). knowmeter merge "
        "combines the shards into one run.",
    )
    merged_from: list[MergedShard] | None = Field(
        default=None,
        description="Set for a run knowmeter merge made: the shards it was made from (each with its "
        "own times, wall time and budget); the run's own times are the merge's.",
    )
    sequential: SequentialRecord | None = Field(
        default=None,
        description="Set for eval --sequential: the design, each look and where and why the run stopped.",
    )
    control_reused: ControlReused | None = Field(
        default=None,
        description="Set for eval --control-run: the stored run whose control results this run reused.",
    )
    subset: SubsetInfo | None = Field(
        default=None,
        description="Set for a run of part of the sample set (eval --limit / --sample): its figures "
        "and watermark are the subset's, never the whole set's.",
    )

    @property
    def incomplete(self) -> Incompleteness | None:
        """Why the run covers only part of its plan (``knowmeter.decision.incompleteness``)."""
        budget = self.budget.tasks_not_started_for_budget if self.budget else 0
        return incompleteness(self.status, missing=self.tasks_total - self.tasks_done, refused_for_budget=budget)

    @property
    def complete(self) -> bool:
        """The run finished and every planned task has a result."""
        return self.incomplete is None


class Cost(_M):
    known_usd: float | None = Field(description="Sum of reported costs; None when no task reported one.")
    tasks_with_known_cost: int
    tasks_with_unknown_cost: int


class Tokens(_M):
    input: int
    output: int
    tasks_with_unknown_usage: int


class Latency(_M):
    mean: float
    p50: float
    p95: float


class ErrorCause(_M):
    count: int
    first: str = Field(description="The first error message of this cause (cut at 200 characters).")


class Judging(_M):
    """What the configured judges did on this variant's graded tasks."""

    judged: int = Field(description="Tasks with a judge-layer score.")
    failed: int = Field(description="Tasks where every judge call failed.")
    no_rubric: int = Field(description="Tasks whose sample has no rubric or dimensions (no judge asked).")
    metrics_scored: int = Field(description="Judge-backed assertions that got a score.")
    metrics_failed: int = Field(description="Judge-backed assertions left unevaluated by a failing judge.")
    first_error: str | None


ErrorKind = Literal["timeout", "crash", "executor error"]


class VariantOperations(_M):
    """One variant: what it is and what running it took (tasks, errors, cost, tokens, latency)."""

    name: str
    role: Literal["control", "treatment"]
    expression: str
    kind: str
    artifact_hash: str
    tasks: int
    errors: int
    cached: int
    error_examples: list[str]
    errors_by_cause: dict[ErrorKind, ErrorCause]
    exec_warnings: dict[str, ErrorCause] = Field(
        description="Warnings the executor attached to tasks, by kind "
        "(e.g. broken_envelope: a script reply that is not valid JSON)."
    )
    judging: Judging
    cost: Cost
    tokens: Tokens
    latency_ms: Latency | None
    assertion_pass_rate: float | None
    layer_means: dict[str, float | None]
    layer_sets: dict[str, int] = Field(description="How many results were scored from which set of layers.")
    outputs_truncated: int = Field(
        default=0,
        description="Tasks whose output was longer than maxGradedOutputChars: "
        "graded and judged on its first characters (their grade's output_truncated).",
    )


class Statistics(_M):
    """The comparison's settings and each variant's statistics on its own."""

    config: CompareConfig
    control: str | None
    treatments: list[str]
    variants: dict[str, VariantStatistics]


class GapsSection(_M):
    """Per-variant gap rates and inventories, bound to the sample set they were measured on."""

    watermark: Watermark
    variants: list[GapSummary]


class CoverageSection(_M):
    """Per-variant knowledge-file coverage, bound to the sample set it was measured on."""

    watermark: Watermark
    variants: list[Coverage]


# --- the comprehension section (knowmeter comprehend) ---------------------------------------


class ComprehensionArm(_M):
    """One arm's figures: cases graded and passed (a case's verdict over its repeats is the
    majority), the pass rate with its Wilson interval, gradings left ungraded."""

    cases_graded: int
    cases_passed: int
    pass_rate: float | None
    wilson: list[float] | None
    gradings: int
    ungraded: int
    behavior_pass_fraction: float | None
    failed_cases: list[str]


class McNemar(_M):
    """McNemar's exact test on the paired case verdicts (baseline = control)."""

    both: int
    control_only: int
    treatment_only: int
    neither: int
    n_pairs: int
    n_discordant: int
    p_value: float | None


class ComprehensionPaired(_M):
    """With-skill − baseline on the cases graded in both arms."""

    cases_paired: int
    mcnemar: McNemar = Field(description="McNemar's exact test on the case verdicts.")
    difference_in_pass_rate: float | None
    behavior_fraction_difference: BootstrapResult | None = Field(
        description="Cluster bootstrap (clusters = cases) of the behavior pass fraction difference."
    )
    mde: float | None = Field(description="Minimum detectable difference in pass fraction (paired t approximation).")
    underpowered: bool
    underpowered_reasons: list[str]


class DimensionPaired(ComprehensionPaired):
    """A dimension's paired figures, with its McNemar p adjusted across the dimensions."""

    p_holm: float | None = Field(description="Holm-adjusted McNemar p across dimensions.")


class ComprehensionBlock(_M):
    """The overall figures: each arm, and the paired difference."""

    baseline: ComprehensionArm
    with_skill: ComprehensionArm
    paired: ComprehensionPaired


class DimensionBlock(ComprehensionBlock):
    """One dimension's figures (C1–C9)."""

    paired: DimensionPaired


ComprehensionLevel = Literal["PASS", "PROVISIONAL", "SHALLOW", "REDUNDANT", "SKIPPED_BASELINE_HIGH", "UNVERIFIED", "NA"]


class ComprehensionVerdict(_M):
    """The skill's verdict in Skill Graph's vocabulary, strict with named exceptions."""

    level: ComprehensionLevel
    headline: str
    exit_code: int = Field(
        description="0 for PASS or PROVISIONAL, 2 for UNVERIFIED by grader replies that broke the rules twice, "
        "else 1 — before the run's blockers (the run's own is decision.exit_code)."
    )
    rule: str
    reasons: list[str]
    caveats: list[str]
    failing_dimensions: list[str]
    unverified_dimensions: list[str]
    not_covered_dimensions: list[str]
    passing_dimensions: list[str]
    eval_score: float | None = Field(
        ge=0, le=5, description="5 × the with-skill case pass rate (Skill Graph's 0.0–5.0 scale, not rounded)"
    )
    eval_failed_ids: list[str]


class BehaviorGrading(_M):
    """The grader's verdict on one expected behavior of one answer."""

    id: str
    verdict: Literal["PASS", "FAIL"] | None
    evidence_quote: str | None
    rationale: str | None
    override: str | None = Field(description="Why code changed the grader's verdict (e.g. verbatim copying).")
    review: str | None = Field(description="Why a person should look (e.g. a hedged PASS).")


class ComprehensionGrading(_M):
    """One answer's grading (one repeat of one case in one arm)."""

    repeat: int
    graded: bool
    verdict: Literal["PASS", "FAIL"] | None
    ungraded_reason: str | None
    behavior_pass_fraction: float | None
    overlap_ngrams: list[str]
    behaviors: list[BehaviorGrading]


class ComprehensionCaseRow(_M):
    case_id: str
    dimension: str
    concept_field: str
    transfer: str | None
    behaviors: list[str]
    derived_behaviors: list[str] = Field(description="Behaviors taken from the rubric (§5.2–5.10), not the file.")
    baseline: list[ComprehensionGrading]
    with_skill: list[ComprehensionGrading]


class SkillInfo(_M):
    name: str
    path: str
    shape: str = Field(description="The SKILL.md frontmatter shape (v4, v6, v8).")
    audit_state: str | None = Field(description="The skill's audit-state.json, when it has one.")


class EvalFileInfo(_M):
    path: str
    format: str


class GraderInfo(_M):
    name: str
    executor: str
    model: str | None
    non_llm: bool


class ComprehensionSettings(_M):
    alpha: float
    min_pairs: int
    max_mde: float
    power: float
    bootstrap_samples: int
    seed: int
    level: float
    bootstrap_clusters: Literal["case"]
    holm_family: Literal["dimensions"]


class ComprehensionSection(_M):
    """``knowmeter comprehend``: rubric C1–C9, baseline vs with-skill."""

    skill: SkillInfo
    eval_file: EvalFileInfo
    notes: list[str]
    grader_prompt_hash: str
    graders: list[GraderInfo]
    dimension_names: dict[str, str]
    overall: ComprehensionBlock
    dimensions: dict[str, DimensionBlock]
    settings: ComprehensionSettings
    verdict: ComprehensionVerdict
    cases: list[ComprehensionCaseRow]
    ungraded: list[str]


# --- the probe gap rate beside the human-sample gap rate (knowmeter probe) -------------------


class ProbeSide(_M):
    """One side of the probe comparison: a run's gap rate for the variant, under its own watermark."""

    run_id: str
    created_at: str
    gap_rate: float | None
    samples_with_gap: int | None
    executed: int | None
    watermark: Watermark


class ProbeVariantRow(_M):
    variant: str
    human: ProbeSide | None = Field(description="The human-written sample set's run; None: none yet.")
    probe: ProbeSide | None = Field(description="The probe sample set's run (knowmeter probe); None: none yet.")
    files_only_probe: list[str] | None = Field(
        description="Knowledge files reached by the probe questions and by no human-written sample; None: "
        "coverage unknown."
    )
    files_unreached: list[str] | None = Field(description="Knowledge files neither sample set reached.")


class ProbeComparison(_M):
    """The probe gap rate beside the human-sample gap rate (gap-signal spec §9), never merged."""

    kind: Literal["human", "probe", "mixed"] = Field(description="This run's kind of sample set.")
    variants: list[ProbeVariantRow]
    warning: str
    note: str | None


# --- the report ----------------------------------------------------------------------------


class Report(_M):
    """``report.json``: a run's provenance, per-variant figures, statistics, verdict, audit,
    gaps, coverage (or a comprehension run's section), gates and the decision."""

    model_config = ConfigDict(title="knowmeter report")

    #: Sections a report may lack (a comprehension run has no comparison; ``tasks`` is left
    #: out on request): left out of the JSON form when absent, never written as null.
    OPTIONAL_SECTIONS: ClassVar[tuple[str, ...]] = (
        "statistics",
        "comparisons",
        "resources",
        "verdict",
        "audit",
        "gaps",
        "coverage",
        "comprehension",
        "gates",
        "decision",
        "exit_code",
        "probe_comparison",
        "tasks",
    )

    schema_version: int = Field(description="The version of this file's shape; knowmeter reads only its own.")
    run: RunInfo
    variants: list[VariantOperations]
    statistics: Statistics | None = None
    comparisons: list[PairComparison] | None = None
    resources: list[ResourceComparison] | None = Field(
        default=None,
        description="Per treatment, the paired difference from the control in cost per task, latency and tokens "
        "(tasks both arms finished; an unknown value is left out and counted, never 0).",
    )
    verdict: Verdict | None = Field(default=None, description="The comparison's verdict (an eval run).")
    audit: MethodologyAudit | None = None
    gaps: GapsSection | None = None
    coverage: CoverageSection | None = None
    comprehension: ComprehensionSection | None = None
    gates: Gates | None = None
    notes: list[str] = Field(default_factory=list, description="The sample-evolution nudge (complete runs only).")
    decision: Decision | None = Field(default=None, description="The run's outcome: verdict, blockers, exit code.")
    probe_comparison: ProbeComparison | None = None
    tasks_file: str | None = Field(
        default=None,
        description="The file beside report.json that holds every task record (one JSON object a line; the "
        "first record of a task id counts): report.json does not repeat them. `knowmeter report RUN --json` "
        "prints the report with its tasks joined in.",
    )
    tasks: Sequence[TaskRecord] | None = Field(
        default=None,
        description="Every stored task record, as stored, in report order (repeat, sample, variant): only in "
        "the joined view (`knowmeter report --json`) and in report.json files of schema_version 2.",
    )  # a report built from a run, or read from report.json: its StoredTasks
    _rows: RowIndex | None = PrivateAttr(default=None)  # see row_index

    @computed_field(description="The exit code of eval / report: decision.exit_code, read from it.")  # type: ignore[prop-decorator]
    @property
    def exit_code(self) -> int | None:
        return None if self.decision is None else self.decision.exit_code

    @field_serializer("tasks")
    def _tasks_as_list(self, tasks: Sequence[TaskRecord] | None) -> list[TaskRecord] | None:
        """``model_dump`` of a report built from a run reads its ``StoredTasks`` into a list."""
        return None if tasks is None else list(tasks)

    def to_dict(self, *, tasks: bool = True) -> dict[str, Any]:
        """The JSON form written as report.json (absent sections left out, tasks as stored;
        without ``tasks`` when ``tasks`` is False)."""
        absent = {name for name in self.OPTIONAL_SECTIONS if getattr(self, name) is None}
        data = self.model_dump(mode="json", exclude={*absent, "tasks"})
        if tasks and self.tasks is not None:
            data["tasks"] = list(self.stored_tasks())
        return data

    def stored_tasks(self) -> Iterator[TaskJSON]:
        """The task records as stored (JSON objects), one at a time, in report order: a report
        built from a run or read from report.json reads them from its results.jsonl
        (``StoredTasks``, ``JoinedTasks``), so they are never all in memory."""
        if isinstance(self.tasks, StoredTasks | JoinedTasks):
            yield from self.tasks.records()
        else:  # embedded (an older report.json, or the joined view read back): put in report order
            for task in sorted(self.tasks or [], key=lambda t: (t.repeat, t.sample_id, t.variant)):
                yield task.stored()

    def row_index(self) -> RowIndex | None:
        """The sample rows of ``tasks`` with their review rank, noted as the report was built from
        its run (``build_report``); None for a report read from report.json."""
        return self._rows

    def keep_row_index(self, rows: RowIndex) -> None:
        """Keep the rows ``build_report`` noted of this report's ``StoredTasks``."""
        if not isinstance(self.tasks, StoredTasks):
            raise TypeError("a row index describes the StoredTasks of a report built from its run")
        self._rows = rows

    def stored_tasks_at(self, positions: Iterable[int]) -> Iterator[TaskJSON]:
        """The task records at ``positions`` of the report order, as stored (a report with a
        ``row_index``: read from its results.jsonl, the others are not read)."""
        if not isinstance(self.tasks, StoredTasks):
            raise TypeError("only the tasks of a report built from its run are read by position")
        return self.tasks.records_at(positions)

    def gated_variants(self) -> list[str]:
        """The variants a gate applies to: the treatments (the variants under test), or the only
        variant of a run without a control. The control's figures are shown, never gated."""
        treatments = [v.name for v in self.variants if v.role == "treatment"]
        return treatments if treatments and len(self.variants) > 1 else [v.name for v in self.variants]
