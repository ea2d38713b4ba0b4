"""The read side of ``report.json``: typed accessors for what the HTML page, the JUnit file and
the Markdown summary show. It is the only place those renderers touch the report's keys, so when
the report becomes one typed model only this module changes. Nothing here computes a statistic;
it picks the stored figures (and the stored decision CI) out of the report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Json = Mapping[str, Any]


def _map(value: Any) -> Json:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
class Watermark:
    paths: list[str]
    count: int | None
    short: str
    id: str
    sha256: str
    warning: str


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
    assertions: list[Json]
    judges: list[Json]
    judge_error: str | None
    events: list[Json]
    gap_signals: list[Json]

    @property
    def prompt(self) -> str | None:
        """The first user message of the trace (the sample's prompt as the agent got it)."""
        for ev in self.events:
            if ev.get("kind") == "message" and ev.get("role") == "user":
                return _str(ev.get("text"))
        return None

    @property
    def failed_assertions(self) -> list[Json]:
        return [a for a in self.assertions if a.get("passed") is False]


@dataclass(frozen=True)
class SampleRow:
    """The tasks of one sample and repeat, one per variant (absent variants are missing)."""

    sample_id: str
    repeat: int
    tasks: dict[str, TaskView] = field(default_factory=dict)


class ReportView:
    """Typed, read-only access to a stored report (``report.json`` content)."""

    def __init__(self, report: Json) -> None:
        self._r = report
        self._run = _map(report.get("run"))

    # -- the decision ----------------------------------------------------------------------
    @property
    def outcome(self) -> Outcome | None:
        """The stored decision (``decision``), else the verdict alone (an older report)."""
        d = _map(self._r.get("decision"))
        v = _map(self._r.get("verdict"))
        if not d and not v:
            return None
        level = _str(v.get("level"))
        rationale = [str(x) for x in _list(v.get("rationale"))]
        if not d:
            return Outcome(outcome=level or "?", verdict=level, headline=str(v.get("headline", "")),
                           recommendation=str(v.get("ship_recommendation", "")), exit_code=self.exit_code,
                           blockers=[], warnings=[], rationale=rationale)
        return Outcome(outcome=str(d.get("outcome", "?")), verdict=_str(d.get("verdict")),
                       headline=str(d.get("headline", "")), recommendation=str(d.get("recommendation", "")),
                       exit_code=_int(d.get("exit_code")),
                       blockers=[(str(b.get("kind")), str(b.get("message")))
                                 for b in map(_map, _list(d.get("blockers")))],
                       warnings=[str(w) for w in _list(d.get("warnings"))], rationale=rationale)

    @property
    def exit_code(self) -> int | None:
        return _int(self._r.get("exit_code"))

    @property
    def notes(self) -> list[str]:
        return [str(x) for x in _list(self._r.get("notes"))]

    # -- run ------------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return str(self._run.get("id", "?"))

    @property
    def run(self) -> Json:
        """Run metadata (provenance, config, budget) as stored."""
        return self._run

    @property
    def status(self) -> str | None:
        return _str(self._run.get("status"))

    @property
    def tasks_done(self) -> int | None:
        return _int(self._run.get("tasks_done"))

    @property
    def tasks_total(self) -> int | None:
        return _int(self._run.get("tasks_total"))

    @property
    def shard_note(self) -> str | None:
        """For the run of one shard (``eval --shard I/N``): that its figures cover only the
        shard's samples; None for any other run."""
        shard = _map(self._run.get("shard"))
        if not shard:
            return None
        return (f"shard {shard.get('index', '?')}/{shard.get('count', '?')}: {self.tasks_total} of the "
                f"plan's {_int(shard.get('plan_tasks'))} tasks — these figures cover this shard's "
                "samples only; knowmeter merge combines the shards")

    @property
    def executor_label(self) -> str:
        ex = _map(self._run.get("executor"))
        model = f" · model {ex['model']}" if ex.get("model") else ""
        return f"{ex.get('name', '?')} ({ex.get('label', '?')}){model}"

    @property
    def watermark(self) -> Watermark:
        wm = _map(_map(self._r.get("gaps")).get("watermark")) or _map(self._run.get("watermark"))
        return Watermark(paths=[str(p) for p in _list(wm.get("paths"))], count=_int(wm.get("count")),
                         short=str(wm.get("short", "?")), id=str(wm.get("id", "?")),
                         sha256=str(wm.get("sha256", "?")), warning=str(wm.get("warning", "")))

    @property
    def provenance(self) -> list[tuple[str, str]]:
        """(label, value) pairs: versions, git, executor, seed, timings, judge and variant hashes."""
        run = self._run
        git = _map(run.get("git"))
        dirty = git.get("dirty")
        rows = [("run", self.run_id), ("created", str(run.get("created_at"))),
                ("finished", str(run.get("finished_at") or "unknown")),
                ("reported", str(run.get("reported_at"))),
                ("status", str(run.get("status") or "unknown")),
                ("executor", self.executor_label + f" · {_map(run.get('executor')).get('identity', '?')}"),
                ("seed", str(run.get("seed"))),
                ("git commit", str(git.get("commit") or "unknown (not a git checkout)")),
                ("git dirty", "unknown" if dirty is None else ("yes" if dirty else "no")),
                ("wall time", "unknown" if run.get("wall_s") is None else f"{run['wall_s']} s")]
        rows += [(f"version {k}", str(v)) for k, v in _map(run.get("versions")).items()]
        rows += [(f"variant {v.name}", f"{v.kind} {v.expression} · sha256 {v.artifact_hash}") for v in self.variants]
        rows += [(f"prompt hash {k}", str(v)) for k, v in _map(run.get("prompt_hashes")).items()]
        for j in _list(run.get("judges")):
            rows.append(("judge", ", ".join(f"{k} {v}" for k, v in _map(j).items())))
        return rows

    @property
    def config(self) -> Json:
        return _map(self._run.get("config"))

    @property
    def budget(self) -> Json:
        return _map(self._run.get("budget"))

    # -- statistics -----------------------------------------------------------------------
    @property
    def stats_config(self) -> Json:
        return _map(_map(self._r.get("statistics")).get("config"))

    def _variant_stats(self, name: str) -> Json:
        return _map(_map(_map(self._r.get("statistics")).get("variants")).get(name))

    @property
    def variants(self) -> list[VariantRow]:
        rows = []
        for v in _list(self._r.get("variants")):
            v = _map(v)
            name = str(v.get("name"))
            st = self._variant_stats(name)
            pr = _map(st.get("pass_rate"))
            cost = _map(v.get("cost"))
            tok = _map(v.get("tokens"))
            lat = _map(v.get("latency_ms"))
            comp = _map(_map(st.get("metrics")).get("composite"))
            rows.append(VariantRow(
                name=name, role=str(v.get("role", "")), kind=str(v.get("kind", "")),
                expression=str(v.get("expression", "")), artifact_hash=str(v.get("artifact_hash", "")),
                tasks=_int(v.get("tasks")), errors=_int(v.get("errors")), cached=_int(v.get("cached")),
                layer_means={str(k): _float(x) for k, x in _map(v.get("layer_means")).items()},
                layer_sets={str(k): int(x) for k, x in _map(v.get("layer_sets")).items()},
                assertion_pass_rate=_float(v.get("assertion_pass_rate")),
                pass_rate=_float(pr.get("rate")), pass_rate_ci=(_float(pr.get("low")), _float(pr.get("high"))),
                pass_rate_counts=(_int(pr.get("passed")), _int(pr.get("n"))),
                cost_known_usd=_float(cost.get("known_usd")), cost_known_tasks=_int(cost.get("tasks_with_known_cost")),
                cost_unknown_tasks=_int(cost.get("tasks_with_unknown_cost")),
                tokens_in=_int(tok.get("input")), tokens_out=_int(tok.get("output")),
                tokens_unknown_tasks=_int(tok.get("tasks_with_unknown_usage")),
                latency_p50_ms=_float(lat.get("p50")), latency_p95_ms=_float(lat.get("p95")),
                composite=self._interval(comp, str(self.stats_config.get("ci_method", "bca"))) if comp else None,
                stability=_map(st.get("stability")) or None,
                judge_agreement=_map(st.get("judge_agreement")) or None,
                saturation=_map(st.get("saturation")) or None,
            ))
        return rows

    @staticmethod
    def _interval(est: Json, method: str) -> Interval:
        ci = _map(est.get(method)) or _map(est.get("percentile"))
        return Interval(estimate=_float(est.get("estimate")), low=_float(ci.get("low")), high=_float(ci.get("high")),
                        method=str(ci.get("method", method)), level=_float(ci.get("level")), b=_int(ci.get("b")),
                        seed=_int(ci.get("seed")))

    @property
    def comparisons(self) -> list[Comparison]:
        out = []
        for c in _list(self._r.get("comparisons")):
            c = _map(c)
            metrics = []
            for name, m in _map(c.get("metrics")).items():
                m = _map(m)
                metrics.append(MetricRow(
                    metric=str(name), n_pairs=_int(m.get("n_pairs")), control_mean=_float(m.get("control_mean")),
                    treatment_mean=_float(m.get("treatment_mean")),
                    diff=self._interval(_map(m.get("diff")), str(m.get("decision_ci", "bca"))),
                    p_adjusted=_float(m.get("p_adjusted")),
                    significant=m.get("significant") if isinstance(m.get("significant"), bool) else None,
                    d_z=_float(m.get("d_z")), mde=_float(m.get("mde")), n_needed=_int(m.get("n_needed")),
                    dropped=_int(_map(m.get("dropped")).get("total"))))
            out.append(Comparison(control=str(c.get("control")), treatment=str(c.get("treatment")),
                                  comparable=bool(c.get("composite_comparable", True)),
                                  comparability_note=_str(c.get("comparability_note")), metrics=metrics,
                                  gates=[_map(g) for g in _list(c.get("gates"))],
                                  saturation=_map(c.get("saturation")) or None,
                                  families=[_map(f) for f in _list(c.get("families"))]))
        return out

    @property
    def audit(self) -> list[Check]:
        return [Check(name=str(k), status=str(_map(v).get("status", "unknown")), detail=str(_map(v).get("detail", "")))
                for k, v in _map(self._r.get("audit")).items()]

    # -- gaps and coverage ----------------------------------------------------------------
    @property
    def gaps(self) -> list[GapRow]:
        rows = []
        for g in _list(_map(self._r.get("gaps")).get("variants")):
            g = _map(g)
            signals = [GapSignal(sample_id=str(s.get("sample_id")), repeat=_int(s.get("repeat")),
                                 source=str(s.get("source", "")), tool=_str(s.get("tool")),
                                 target=_str(s.get("target")), context=_str(s.get("context")),
                                 occurrences=_int(s.get("occurrences")))
                       for s in map(_map, _list(g.get("signals")))]
            rows.append(GapRow(variant=str(g.get("variant")), gap_rate=_float(g.get("gap_rate")),
                               weighted_gap_rate=_float(g.get("weighted_gap_rate")),
                               samples_with_gap=_int(g.get("samples_with_gap")), executed=_int(g.get("executed")),
                               samples_by_source={str(k): int(n) for k, n in _map(g.get("samples_by_source")).items()},
                               confidence=_str(g.get("confidence")), hedging_mode=_str(g.get("hedging_mode")),
                               soft_signal_note=_str(g.get("soft_signal_note")), signals=signals))
        return rows

    @property
    def coverage(self) -> list[CoverageRow]:
        return [CoverageRow(variant=str(c.get("variant")), rate=_float(c.get("rate")), covered=_int(c.get("covered")),
                            total=_int(c.get("total")), uncovered=[str(u) for u in _list(c.get("uncovered"))])
                for c in map(_map, _list(_map(self._r.get("coverage")).get("variants")))]

    def coverage_for(self, variant: str) -> CoverageRow | None:
        return next((c for c in self.coverage if c.variant == variant), None)

    @property
    def probe_comparison(self) -> Json | None:
        """The probe gap rate beside the human-sample gap rate (``knowmeter probe``), if any."""
        return _map(self._r.get("probe_comparison")) or None

    @property
    def comprehension(self) -> Json | None:
        """The comprehension section, when a run has one (hook for that feature's renderer)."""
        return _map(self._r.get("comprehension")) or None

    # -- per task -------------------------------------------------------------------------
    def tasks(self) -> list[TaskView]:
        out = []
        for t in map(_map, _list(self._r.get("tasks"))):
            ex = _map(t.get("exec"))
            grade = _map(t.get("grade"))
            gaps = _map(_map(t.get("analysis")).get("gaps"))
            out.append(TaskView(
                task_id=str(t.get("task_id")), sample_id=str(t.get("sample_id")), variant=str(t.get("variant")),
                repeat=_int(t.get("repeat")) or 0, output=str(ex.get("output") or ""), error=_str(ex.get("error")),
                composite=_float(grade.get("composite")),
                passed=grade.get("passed") if isinstance(grade.get("passed"), bool) else None,
                cached=bool(t.get("cached")), cost_usd=_float(ex.get("cost_usd")),
                latency_ms=_float(ex.get("latency_ms")),
                assertions=[_map(a) for a in _list(grade.get("assertions"))],
                judges=[_map(j) for j in _list(grade.get("judges"))], judge_error=_str(grade.get("judge_error")),
                events=[_map(e) for e in _list(_map(ex.get("trace")).get("events"))],
                gap_signals=[_map(s) for s in _list(gaps.get("signals"))]))
        return out

    def samples(self) -> list[SampleRow]:
        """Tasks grouped by (sample, repeat), in the report's order."""
        rows: dict[tuple[str, int], SampleRow] = {}
        for t in self.tasks():
            rows.setdefault((t.sample_id, t.repeat), SampleRow(t.sample_id, t.repeat)).tasks[t.variant] = t
        return list(rows.values())

    @property
    def control(self) -> str | None:
        return _str(_map(self._r.get("statistics")).get("control"))
