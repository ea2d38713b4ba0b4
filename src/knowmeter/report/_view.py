"""The presentation side of a ``Report``: the rows the HTML page, the JUnit file and the
Markdown summary show, joined from the report's sections (a variant's operations with its
statistics, a comparison's metrics with their decision CI). Nothing here computes a statistic;
it picks the stored figures out of the report. Parts the templates print as they are
(configuration, budget, stability, …) are handed over in their JSON form."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from knowmeter.report._model import Report
from knowmeter.report._rows import RowIndex, TaskFlags
from knowmeter.stats import BootstrapEstimate
from knowmeter.store import AnalysisJSON, AssertionJSON, GradeJSON, JudgeJSON, LayersJSON, SignalRecord, TaskJSON
from knowmeter.watermark import Watermark

Json = Mapping[str, Any]


def _json(model: BaseModel | None) -> Json | None:
    return None if model is None else model.model_dump(mode="json")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Outcome:
    """The run's decision: the outcome word (a verdict level, or what blocked the run), the
    comparison's verdict level, the first and last lines, the blockers, warnings and rationale."""

    outcome: str
    verdict: str | None
    headline: str
    recommendation: str
    exit_code: int | None
    blockers: list[tuple[str, str]]
    warnings: list[str]
    rationale: list[str]


@dataclass(frozen=True)
class Interval:
    """A stored interval with what it depends on."""

    estimate: float | None
    low: float | None
    high: float | None
    method: str
    level: float | None
    b: int | None
    seed: int | None


@dataclass(frozen=True)
class VariantRow:
    name: str
    role: str
    kind: str
    expression: str
    artifact_hash: str
    tasks: int | None
    errors: int | None
    cached: int | None
    layer_means: dict[str, float | None]
    layer_sets: dict[str, int]
    assertion_pass_rate: float | None
    pass_rate: float | None
    pass_rate_ci: tuple[float | None, float | None]
    pass_rate_counts: tuple[int | None, int | None]
    #: how many distinct samples the pass rate's results come from (fewer than its n with repeats)
    pass_rate_samples: int | None
    cost_known_usd: float | None
    cost_known_tasks: int | None
    cost_unknown_tasks: int | None
    tokens_in: int | None
    tokens_out: int | None
    tokens_unknown_tasks: int | None
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    composite: Interval | None
    stability: Json | None
    judge_agreement: Json | None
    saturation: Json | None


@dataclass(frozen=True)
class MetricRow:
    metric: str
    n_pairs: int | None
    control_mean: float | None
    treatment_mean: float | None
    diff: Interval
    p_adjusted: float | None
    significant: bool | None
    d_z: float | None
    mde: float | None
    n_needed: int | None
    dropped: int | None
    #: how its p was computed: "exact, 2^n sign flips" or "10000 random sign flips, seed S" (None: no test)
    p_method: str | None = None


def _p_method(method: str | None, n_permutations: int, seed: int | None) -> str | None:
    """``MetricRow.p_method`` from a stored permutation test."""
    if method == "exact":
        return "exact, every sign flip"
    if method == "monte_carlo":
        return f"{n_permutations} random sign flips, seed {'unknown' if seed is None else seed}"
    return None


@dataclass(frozen=True)
class Comparison:
    control: str
    treatment: str
    comparable: bool
    comparability_note: str | None
    metrics: list[MetricRow]
    gates: list[Json]
    saturation: Json | None
    families: list[Json]


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    detail: str


@dataclass(frozen=True)
class GapSignal:
    sample_id: str
    repeat: int | None
    source: str
    tool: str | None
    target: str | None
    context: str | None
    occurrences: int | None


@dataclass(frozen=True)
class GapRow:
    variant: str
    gap_rate: float | None
    weighted_gap_rate: float | None
    samples_with_gap: int | None
    executed: int | None
    samples_by_source: dict[str, int]
    confidence: str | None
    hedging_mode: str | None
    soft_signal_note: str | None
    signals: list[GapSignal]


@dataclass(frozen=True)
class CoverageRow:
    variant: str
    rate: float | None
    covered: int | None
    total: int | None
    uncovered: list[str]


@dataclass(frozen=True)
class TaskView:
    """One sample × variant × repeat as stored."""

    task_id: str
    sample_id: str
    variant: str
    repeat: int
    output: str
    error: str | None
    composite: float | None
    passed: bool | None
    cached: bool
    cost_usd: float | None
    latency_ms: float | None
    assertions: list[AssertionJSON]
    judges: list[JudgeJSON]
    judge_error: str | None
    events: list[Json]
    gap_signals: list[SignalRecord]
    layers: LayersJSON = field(default_factory=LayersJSON)
    #: the sample's prompt as the task stored it (None in records from before it was stored)
    sample_prompt: str | None = None
    #: whether its gap signals were looked for (False: the task failed to run, or has no analysis —
    #: its gap signals are unknown, not none)
    gaps_analysed: bool = True

    @property
    def prompt(self) -> str | None:
        """The sample's prompt as the task was given it — whatever the agent recorded; for a record
        from before it was stored, the first user message of the trace."""
        if self.sample_prompt is not None:
            return self.sample_prompt
        for ev in self.events:
            if ev.get("kind") == "message" and ev.get("role") == "user":
                return _str(ev.get("text"))
        return None

    @property
    def failed_assertions(self) -> list[Json]:
        return [a for a in self.assertions if a.get("passed") is False]

    @property
    def flags(self) -> TaskFlags:
        """What the ranking of its row reads of it (as ``TaskFlags.of_record`` reads the record)."""
        return TaskFlags(
            passed=self.passed,
            ran=self.error is None,
            troubled=bool(self.error or self.judge_error or self.failed_assertions),
            gaps=bool(self.gap_signals),
        )


@dataclass(frozen=True)
class SampleRow:
    """The tasks of one sample and repeat, one per variant (absent variants are missing)."""

    sample_id: str
    repeat: int
    tasks: dict[str, TaskView] = field(default_factory=dict)


#: What the composite is and what it cannot be used for (composite-score spec §1, §3), shown
#: beside every variant table
COMPOSITE_NOTE = (
    "composite = equal-weight mean of the layers present (fact and behavior: 1 + 4 × the weighted share "
    "of their assertions passed; judge: its 1–5 score) — a signal for comparing variants on the same "
    "samples, not an absolute score: the equal weights are arbitrary, the layers' scales differ, and "
    "composites from different layer sets are not comparable"
)


class ReportView:
    """Read-only rows of a report for the renderers."""

    def __init__(self, report: Report) -> None:
        self._r = report
        self._run = report.run

    # -- the decision ----------------------------------------------------------------------
    @property
    def outcome(self) -> Outcome | None:
        """The decision (``Report.decision``, never re-decided here), with the verdict's rationale;
        None for a report not decided."""
        d, v = self._r.decision, self._r.verdict
        rationale = list(v.rationale) if v else []
        if d is None:
            return None
        return Outcome(
            outcome=d.outcome,
            verdict=d.verdict,
            headline=d.headline,
            recommendation=d.recommendation,
            exit_code=d.exit_code,
            blockers=[(b.kind, b.message) for b in d.blockers],
            warnings=list(d.warnings),
            rationale=rationale,
        )

    @property
    def notes(self) -> list[str]:
        return list(self._r.notes)

    # -- run ------------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return self._run.id

    @property
    def status(self) -> str | None:
        return self._run.status

    @property
    def tasks_done(self) -> int:
        return self._run.tasks_done

    @property
    def tasks_total(self) -> int:
        return self._run.tasks_total

    @property
    def shard_note(self) -> str | None:
        """For the run of one shard (``eval --shard I/N``): that its figures cover only the
        shard's samples; None for any other run."""
        shard = self._run.shard
        if shard is None:
            return None
        return (
            f"shard {shard.index}/{shard.count}: {self.tasks_total} of the plan's {shard.plan_tasks} tasks — "
            "these figures cover this shard's samples only; knowmeter merge combines the shards"
        )

    @property
    def tradeoffs(self) -> list[str]:
        """Per treatment: its score change and what it costs in cost per task, latency and tokens."""
        from knowmeter.report._tradeoff import tradeoff_lines

        return tradeoff_lines(self._r.resources, self._r.comparisons)

    @property
    def tradeoff_header(self) -> str:
        """What the trade-off lines' figures are."""
        from knowmeter.report._tradeoff import TRADEOFF_HEADER

        return TRADEOFF_HEADER

    @property
    def subset_note(self) -> str | None:
        """For a run of part of the sample set (``eval --limit`` / ``--sample``): that it is a
        subset; None for any other run."""
        sub = self._run.subset
        if sub is None:
            return None
        how = " and ".join(
            [
                *([f"--sample {', '.join(sub.sample_ids)}"] if sub.sample_ids else []),
                *([f"--limit {sub.limit}"] if sub.limit is not None else []),
            ]
        )
        return (
            f"SUBSET: {sub.samples} of the {sub.of} samples ({how}) — a debugging run, not a run of the whole "
            "sample set; its watermark is the subset's"
        )

    @property
    def spend(self) -> str | None:
        """The run's known model spend by kind of call — the agent's and the judges' (and the
        hedging classifier's, the grader's) — and their total, with the calls whose cost is
        unknown; None when the run recorded no spend (a run from before it did)."""
        budget = self._run.budget
        if budget is None or not budget.calls:
            return None
        parts = []
        for kind, c in budget.calls.items():
            unknown = f" + {c.unknown_cost} call(s) unknown" if c.unknown_cost else ""
            parts.append(f"{kind} ${c.spent_known_usd:.4f}{unknown}")
        return f"spend (known): {' · '.join(parts)} · total ${budget.spent_known_usd:.4f}"

    @property
    def executor_label(self) -> str:
        ex = self._run.executor
        model = f" · model {ex.model}" if ex.model else ""
        return f"{ex.name} ({ex.label}){model}"

    @property
    def watermark(self) -> Watermark:
        return self._r.gaps.watermark if self._r.gaps else self._run.watermark

    @property
    def provenance(self) -> list[tuple[str, str]]:
        """(label, value) pairs: versions, git, executor, seed, timings, judge and variant hashes."""
        run = self._run
        dirty = run.git.dirty
        rows = [
            ("run", self.run_id),
            ("created", run.created_at),
            ("finished", run.finished_at or "unknown"),
            ("reported", run.reported_at),
            ("status", run.status or "unknown"),
            ("executor", self.executor_label + f" · {run.executor.identity}"),
            ("seed", str(run.seed)),
            ("git commit", run.git.commit or "unknown (not a git checkout)"),
            ("git dirty", "unknown" if dirty is None else ("yes" if dirty else "no")),
            ("wall time", "unknown" if run.wall_s is None else f"{run.wall_s} s"),
        ]
        rows += [
            (
                f"merged from shard {m.shard}",
                f"run {m.run_id} · {m.status or 'status unknown'} · created {m.created_at} · finished "
                f"{m.finished_at or 'unknown'} · wall time {'unknown' if m.wall_s is None else f'{m.wall_s} s'}",
            )
            for m in run.merged_from or []
        ]
        rows += [(f"version {k}", v) for k, v in run.versions.items()]
        rows += [(f"variant {v.name}", f"{v.kind} {v.expression} · sha256 {v.artifact_hash}") for v in self.variants]
        rows += [(f"prompt hash {k}", v) for k, v in run.prompt_hashes.items()]
        rows += [("judge", f"name {j.name}, executor {j.executor}, model {j.model}") for j in run.judges]
        return rows

    @property
    def config(self) -> Json:
        return self._run.config.model_dump(mode="json")

    @property
    def repeats(self) -> int:
        """Repeats of each sample (each case and arm, for a comprehension run)."""
        return self._run.config.repeat

    @property
    def judge_repeat(self) -> int:
        """Calls of each judge (each grader) per answer."""
        return self._run.config.judge_repeat

    @property
    def budget(self) -> Json:
        return _json(self._run.budget) or {}

    # -- statistics -----------------------------------------------------------------------
    @property
    def stats_config(self) -> Json:
        return _json(self._r.statistics.config if self._r.statistics else None) or {}

    @property
    def variants(self) -> list[VariantRow]:
        rows = []
        stats = self._r.statistics
        method = stats.config.ci_method if stats else "bca"
        for v in self._r.variants:
            st = stats.variants.get(v.name) if stats else None
            pr = st.pass_rate if st else None
            comp = st.metrics.get("composite") if st else None
            rows.append(
                VariantRow(
                    name=v.name,
                    role=v.role,
                    kind=v.kind,
                    expression=v.expression,
                    artifact_hash=v.artifact_hash,
                    tasks=v.tasks,
                    errors=v.errors,
                    cached=v.cached,
                    layer_means=dict(v.layer_means),
                    layer_sets=dict(v.layer_sets),
                    assertion_pass_rate=v.assertion_pass_rate,
                    pass_rate=pr.rate if pr else None,
                    pass_rate_ci=(pr.low, pr.high) if pr else (None, None),
                    pass_rate_counts=(pr.passed, pr.n) if pr else (None, None),
                    pass_rate_samples=pr.n_samples if pr else None,
                    cost_known_usd=v.cost.known_usd,
                    cost_known_tasks=v.cost.tasks_with_known_cost,
                    cost_unknown_tasks=v.cost.tasks_with_unknown_cost,
                    tokens_in=v.tokens.input,
                    tokens_out=v.tokens.output,
                    tokens_unknown_tasks=v.tokens.tasks_with_unknown_usage,
                    latency_p50_ms=v.latency_ms.p50 if v.latency_ms else None,
                    latency_p95_ms=v.latency_ms.p95 if v.latency_ms else None,
                    composite=self._interval(comp, method) if comp else None,
                    stability=_json(st.stability) if st else None,
                    judge_agreement=_json(st.judge_agreement) if st else None,
                    saturation=_json(st.saturation) if st else None,
                )
            )
        return rows

    @staticmethod
    def _interval(est: BootstrapEstimate, method: str) -> Interval:
        ci = est.bca if method == "bca" else est.percentile
        return Interval(
            estimate=est.estimate, low=ci.low, high=ci.high, method=ci.method, level=ci.level, b=ci.b, seed=ci.seed
        )

    @property
    def comparisons(self) -> list[Comparison]:
        return [
            Comparison(
                control=c.control,
                treatment=c.treatment,
                comparable=c.composite_comparable,
                comparability_note=c.comparability_note,
                metrics=[
                    MetricRow(
                        metric=name,
                        n_pairs=m.n_pairs,
                        control_mean=m.control_mean,
                        treatment_mean=m.treatment_mean,
                        diff=self._interval(m.diff, m.decision_ci),
                        p_adjusted=m.p_adjusted,
                        significant=m.significant,
                        d_z=m.d_z,
                        mde=m.mde,
                        n_needed=m.n_needed,
                        dropped=m.dropped.total,
                        p_method=_p_method(m.permutation.method, m.permutation.n_permutations, m.permutation.seed),
                    )
                    for name, m in c.metrics.items()
                ],
                gates=[g.model_dump(mode="json") for g in c.gates],
                saturation=_json(c.saturation),
                families=[f.model_dump(mode="json") for f in c.families],
            )
            for c in self._r.comparisons or []
        ]

    @property
    def audit(self) -> list[Check]:
        if self._r.audit is None:
            return []
        return [Check(name=name, status=str(check.status), detail=check.detail) for name, check in self._r.audit]

    # -- gaps and coverage ----------------------------------------------------------------
    @property
    def gaps(self) -> list[GapRow]:
        return [
            GapRow(
                variant=str(g.variant),
                gap_rate=g.gap_rate,
                weighted_gap_rate=g.weighted_gap_rate,
                samples_with_gap=g.samples_with_gap,
                executed=g.executed,
                samples_by_source={str(k): n for k, n in g.samples_by_source.items()},
                confidence=g.confidence,
                hedging_mode=g.hedging_mode,
                soft_signal_note=g.soft_signal_note,
                signals=[
                    GapSignal(
                        sample_id=s.sample_id,
                        repeat=s.repeat,
                        source=s.source,
                        tool=s.tool,
                        target=s.target,
                        context=s.context,
                        occurrences=s.occurrences,
                    )
                    for s in g.signals
                ],
            )
            for g in (self._r.gaps.variants if self._r.gaps else [])
        ]

    @property
    def coverage(self) -> list[CoverageRow]:
        return [
            CoverageRow(
                variant=str(c.variant), rate=c.rate, covered=c.covered, total=c.total, uncovered=list(c.uncovered)
            )
            for c in (self._r.coverage.variants if self._r.coverage else [])
        ]

    def coverage_for(self, variant: str) -> CoverageRow | None:
        return next((c for c in self.coverage if c.variant == variant), None)

    @property
    def probe_comparison(self) -> Json | None:
        """The probe gap rate beside the human-sample gap rate (``knowmeter probe``), if any."""
        return _json(self._r.probe_comparison)

    @property
    def comprehension(self) -> Json | None:
        """The comprehension section, when a run has one (hook for that feature's renderer)."""
        return _json(self._r.comprehension)

    # -- per task -------------------------------------------------------------------------
    def tasks(self) -> Iterator[TaskView]:
        """The tasks in the report's order, one at a time (``Report.stored_tasks``: a report built
        from a run or read from report.json reads them from its results.jsonl on each call, so they
        are never all in memory). Views are made from the records as stored: each was checked
        against ``TaskRecord`` when the run or report was read."""
        for rec in self._r.stored_tasks():
            yield _task_view(rec)

    def samples(self) -> Iterator[SampleRow]:
        """Tasks grouped by (sample, repeat), in the report's order, one row at a time."""
        return _rows(self.tasks())

    def row_index(self) -> RowIndex | None:
        """The rows of ``samples`` with their review rank, without reading a task (``Report.row_index``;
        None for a report read from report.json)."""
        return self._r.row_index()

    def samples_at(self, rows: Iterable[int]) -> Iterator[SampleRow]:
        """The rows of ``samples`` at the positions ``rows`` (ascending; a report with a
        ``row_index``): only their tasks are read."""
        index = self._r.row_index()
        if index is None:
            raise TypeError("rows are read by position only from a report built from its run")
        positions = (task for row in rows for task in index.tasks(row))
        return _rows(_task_view(rec) for rec in self._r.stored_tasks_at(positions))

    @property
    def control(self) -> str | None:
        return self._r.statistics.control if self._r.statistics else None


def _rows(tasks: Iterable[TaskView]) -> Iterator[SampleRow]:
    """``tasks`` (in the report's order) grouped by (sample, repeat). The report keeps a sample's
    variants together (ordered by repeat, sample, variant), so a row is complete when the next
    task belongs to another sample or repeat."""
    row: SampleRow | None = None
    for t in tasks:
        if row is None or (row.sample_id, row.repeat) != (t.sample_id, t.repeat):
            if row is not None:
                yield row
            row = SampleRow(t.sample_id, t.repeat)
        row.tasks[t.variant] = t
    if row is not None:
        yield row


def _task_view(rec: TaskJSON) -> TaskView:
    ex = rec["exec"]
    grade = rec.get("grade") or GradeJSON()
    trace = ex.get("trace")
    events = trace.get("events") if trace is not None else None
    gaps = (rec.get("analysis") or AnalysisJSON()).get("gaps")
    return TaskView(
        task_id=rec["task_id"],
        sample_id=rec["sample_id"],
        variant=rec["variant"],
        repeat=rec["repeat"],
        output=str(ex.get("output") or ""),
        error=ex.get("error"),
        composite=grade.get("composite"),
        passed=grade.get("passed"),
        cached=rec["cached"],
        cost_usd=ex.get("cost_usd"),
        latency_ms=ex.get("latency_ms"),
        assertions=list(grade.get("assertions") or []),
        judges=list(grade.get("judges") or []),
        judge_error=_str(grade.get("judge_error")),
        events=[e for e in events if isinstance(e, Mapping)] if isinstance(events, list) else [],
        gap_signals=list(gaps.get("signals", [])) if gaps is not None else [],
        layers=grade.get("layers") or LayersJSON(),
        sample_prompt=_str(rec.get("prompt")),
        gaps_analysed=gaps is not None and gaps.get("ok", True) is True,
    )
