"""The report's schema: pydantic models, the source of the JSON Schema shipped as
``report.schema.json`` (regenerate with ``python -m knowmeter.report._schema``; a test keeps the
shipped file in step). ``build_report`` validates every report against these models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Watermark(_M):
    """The sample set every figure depends on (gap-signal spec §7.1)."""

    paths: list[str]
    count: int
    sha256: str
    short: str
    id: str
    warning: str


class SampleSetInfo(_M):
    """What kind of sample set the watermark names: written by people, made by knowmeter probe,
    or a mix (gap-signal spec §9: the two gap rates are shown side by side, never merged)."""

    kind: Literal["human", "probe", "mixed"]
    probe_samples: int
    generators: list[str]
    prompt_hashes: list[str]
    kb_sha256: list[str] = Field(description="Hashes of the knowledge bases the probe questions were made from.")


class ExecutorInfo(_M):
    name: str
    identity: str
    non_llm: bool
    model: str | None
    label: str
    #: True: each task's agent was sealed from the others; False: run with --unsealed;
    #: None: the executor runs no agent process of its own (offline, script, model APIs)
    sealed: bool | None = None


class Git(_M):
    commit: str | None
    dirty: bool | None


class Partial(_M):
    """Why a run's report covers only part of its planned tasks."""

    reason: str
    tasks_missing: int
    variants_without_results: list[str]


class RunInfo(_M):
    """Run metadata: provenance, settings, watermark, budget, timings."""

    model_config = ConfigDict(extra="allow")

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
        default=None, description="The sample set's kind (human / probe / mixed); None for runs made before "
                                  "knowmeter recorded it (their samples were written by people).")
    config: dict[str, Any]
    budget: dict[str, Any] | None
    tasks_total: int
    tasks_done: int
    tasks_missing: int
    results_problems: list[str] | None = Field(
        default=None, description="Lines of results.jsonl that were not counted (cut off, not JSON) and tasks "
                                  "stored more than once (counted once).")
    partial: Partial | None = Field(
        default=None, description="Set when the run stopped early (budget, interruption, kill): the report "
                                  "covers only the tasks that finished.")
    wall_s: float | None
    judges: list[dict[str, Any]] = Field(description="Configured judges (name, executor, model).")
    prompt_hashes: dict[str, str] = Field(description="Hashes of the judge and judge-backed metric prompts.")
    shard: dict[str, Any] | None = Field(
        default=None, description="Set for a run of one shard of a plan (eval --shard I/N): index, count, "
                                  "plan_hash, plan_tasks. knowmeter merge combines the shards into one run.")


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


class VariantSummary(_M):
    """Per-variant operational summary; statistics and gaps are added by their sections."""

    model_config = ConfigDict(extra="allow")

    name: str
    role: Literal["control", "treatment"]
    expression: str
    kind: str
    artifact_hash: str
    tasks: int
    errors: int
    cached: int
    error_examples: list[str]
    errors_by_cause: dict[Literal["timeout", "crash", "executor error"], ErrorCause]
    exec_warnings: dict[str, ErrorCause] = Field(description="Warnings the executor attached to tasks, by kind "
                                                 "(e.g. broken_envelope: a script reply that is not valid JSON).")
    judging: Judging
    cost: Cost
    tokens: Tokens
    latency_ms: Latency | None
    assertion_pass_rate: float | None
    layer_means: dict[str, float | None]
    layer_sets: dict[str, int] = Field(description="How many results were scored from which set of layers.")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ExecRecord(_Open):
    """What the agent run gave (the fields the report reads are typed; the rest is free)."""

    error: str | None = None
    timed_out: bool = False
    cost_usd: float | None = None
    latency_ms: float | None = None
    usage: dict[str, int | None] | None = None


class AssertionRecord(_Open):
    """One assertion's outcome; ``passed`` None when it could not be decided."""

    passed: bool | None = None
    weight: float = 1.0


class JudgeRecord(_Open):
    """One judge's scores of the answer."""

    judge: str
    mean: float | None = None


class GradeRecord(_Open):
    """The grade of one task: per-layer scores, composite, assertions and judges."""

    layers: dict[str, float | None] = Field(default_factory=dict)
    composite: float | None = None
    layers_used: list[str] = Field(default_factory=list)
    passed: bool | None = None
    assertions: list[AssertionRecord] = Field(default_factory=list)
    judges: list[JudgeRecord] = Field(default_factory=list)


class AnalysisRecord(_Open):
    """A task's analysis: gap signals (checked by the gaps section) and file accesses."""

    gaps: dict[str, Any] | None = None
    access: dict[str, Annotated[int, Field(ge=0)]] | None = None


class TaskRecord(_M):
    """One finished task as stored in results.jsonl (exec result with trace, grade, analysis)."""

    model_config = ConfigDict(extra="allow")

    task_id: str
    sample_id: str
    variant: str
    role: str
    repeat: int = Field(ge=0)
    attempts: int = Field(ge=0)
    cached: bool
    started_at: str
    finished_at: str
    exec: ExecRecord
    grade: GradeRecord | None = None
    analysis: AnalysisRecord | None = None
    comprehension: dict[str, Any] | None = Field(
        default=None, description="A comprehension run's grading of this answer (knowmeter comprehend).")


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


class ComprehensionPaired(_M):
    """With-skill − baseline on the cases graded in both arms."""

    cases_paired: int
    mcnemar: dict[str, Any] = Field(description="McNemar's exact test on the case verdicts.")
    difference_in_pass_rate: float | None
    behavior_fraction_difference: dict[str, Any] | None = Field(
        description="Cluster bootstrap (clusters = cases) of the behavior pass fraction difference.")
    mde: float | None = Field(description="Minimum detectable difference in pass fraction (paired t approximation).")
    underpowered: bool
    underpowered_reasons: list[str]
    p_holm: float | None = Field(default=None, description="Holm-adjusted McNemar p across dimensions.")


class ComprehensionBlock(_M):
    baseline: ComprehensionArm
    with_skill: ComprehensionArm
    paired: ComprehensionPaired


class ComprehensionVerdict(_M):
    """The skill's verdict in Skill Graph's vocabulary, strict with named exceptions."""

    level: Literal["PASS", "PROVISIONAL", "SHALLOW", "REDUNDANT", "SKIPPED_BASELINE_HIGH", "UNVERIFIED"]
    headline: str
    exit_code: int = Field(description="0 for PASS or PROVISIONAL, else 1 (before the run's blockers).")
    rule: str
    reasons: list[str]
    caveats: list[str]
    failing_dimensions: list[str]
    unverified_dimensions: list[str]
    not_covered_dimensions: list[str]
    passing_dimensions: list[str]
    eval_score: int | None = Field(ge=0, le=5)
    eval_failed_ids: list[str]


class ComprehensionGrading(_M):
    """One answer's grading (one repeat of one case in one arm)."""

    repeat: int
    graded: bool
    verdict: Literal["PASS", "FAIL"] | None
    ungraded_reason: str | None
    behavior_pass_fraction: float | None
    overlap_ngrams: list[str]
    behaviors: list[dict[str, Any]]


class ComprehensionCaseRow(_M):
    case_id: str
    dimension: str
    concept_field: str
    transfer: str | None
    behaviors: list[str]
    derived_behaviors: list[str] = Field(description="Behaviors taken from the rubric (§5.2–5.10), not the file.")
    baseline: list[ComprehensionGrading]
    with_skill: list[ComprehensionGrading]


class ComprehensionSection(_M):
    """``knowmeter comprehend``: rubric C1–C9, baseline vs with-skill."""

    skill: dict[str, Any]
    eval_file: dict[str, Any]
    notes: list[str]
    grader_prompt_hash: str
    graders: list[dict[str, Any]]
    dimension_names: dict[str, str]
    overall: ComprehensionBlock
    dimensions: dict[str, ComprehensionBlock]
    settings: dict[str, Any]
    verdict: ComprehensionVerdict
    cases: list[ComprehensionCaseRow]
    ungraded: list[str]


class Blocker(_M):
    """A reason the run cannot pass whatever its verdict."""

    kind: Literal["not_measured", "incomplete", "judge_failed", "gate_failed"]
    message: str


class Decision(_M):
    """The run's outcome: the comparison's verdict plus what stops it passing (``knowmeter.decision``)."""

    outcome: Literal["PROGRESS", "CAUTIOUS", "REGRESS", "NOISE", "UNDERPOWERED", "SOLO", "NOT MEASURED",
                     "INCOMPLETE", "JUDGE FAILED", "GATE FAILED"]
    verdict: Literal["PROGRESS", "CAUTIOUS", "REGRESS", "NOISE", "UNDERPOWERED", "SOLO"] | None
    passed: bool
    exit_code: int
    headline: str
    recommendation: str
    blockers: list[Blocker]
    warnings: list[str]


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
                    "coverage unknown.")
    files_unreached: list[str] | None = Field(description="Knowledge files neither sample set reached.")


class ProbeComparison(_M):
    """The probe gap rate beside the human-sample gap rate (gap-signal spec §9), never merged."""

    kind: Literal["human", "probe", "mixed"] = Field(description="This run's kind of sample set.")
    variants: list[ProbeVariantRow]
    warning: str
    note: str | None


class Report(_M):
    """``report.json``."""

    model_config = ConfigDict(extra="allow", title="knowmeter report")

    schema_version: int
    run: RunInfo
    variants: list[VariantSummary]
    decision: Decision | None = None
    tasks: list[TaskRecord] | None = None
    comprehension: ComprehensionSection | None = None
    probe_comparison: ProbeComparison | None = None


def json_schema() -> dict[str, Any]:
    schema = Report.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


if __name__ == "__main__":  # regenerate the shipped schema
    SCHEMA_FILE.write_text(json.dumps(json_schema(), indent=2) + "\n", encoding="utf-8")
