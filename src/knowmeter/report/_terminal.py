"""The terminal summary of a report, designed for 80 columns.

The first line is the run's decision (``Report.decision``: the verdict, or what stops the run
from passing), the last its recommendation — one object, so they cannot contradict. Everything
between is prose wrapped at word boundaries with a hanging indent (variants, failures, the
verdict's rationale, gaps and coverage); only the paired-comparison table has columns, and it is
printed as stacked lines when the console is narrower than the table. Every string from the
report is made ``printable`` as it is printed (agent output, variant names and file names are
untrusted).
"""

from __future__ import annotations

from typing import Any, Literal

from rich.console import Console

from knowmeter import defaults
from knowmeter.printable import Printer
from knowmeter.report._cost_text import known_cost_text
from knowmeter.report._decision import LABELS
from knowmeter.report._model import ProbeComparison, Report
from knowmeter.report._tradeoff import TRADEOFF_HEADER
from knowmeter.report._view import COMPOSITE_NOTE, ReportView
from knowmeter.stats import BootstrapEstimate

#: The paired-comparison table's columns: (header, width, right-aligned).
_COLUMNS = (
    ("metric", 9, False),
    ("pairs", 5, True),
    ("control", 7, True),
    ("treatment", 9, True),
    ("Δ", 7, True),
    ("CI", 14, False),
    ("p (adj)", 7, True),
    ("d_z", 7, True),
    ("sig", 3, False),
)
_INDENT = "  "


def _fmt(v: Any, spec: str = ".2f") -> str:
    if v is None:
        return "unknown"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def percent(v: Any) -> str:
    """``41.7%``, or ``unknown`` for None (never a fake 0)."""
    return "unknown" if v is None else f"{100 * float(v):.1f}%"


def render_terminal(report: Report, console: Console) -> None:
    """Print the report: decision, run, variants, failures, comparisons and rationale, audit,
    gaps and coverage, warnings, and the recommendation last."""
    out = Printer(console)
    decision = report.decision
    if decision:
        out.line(decision.headline, style="bold")
    run = report.run
    wm = run.watermark
    ex = run.executor
    model = f" · model {ex.model}" if ex.model else ""
    out.line(
        f"run {run.id} · {ex.name} ({ex.label}){model} · {run.tasks_done}/{run.tasks_total} tasks · seed {run.seed}"
    )
    out.line(f"sample set {', '.join(wm.paths)} · {wm.count} samples · {wm.short}")
    view = ReportView(report)
    if view.spend:
        out.line(view.spend)
    if shard_note := view.shard_note:
        out.line(shard_note)
    if subset_note := view.subset_note:
        out.line(subset_note)
    blockers = decision.blockers if decision else []
    for b in blockers[1:]:
        out.line(f"{LABELS[b.kind]}: {b.message}", indent="✗ ")
    _render_variants(report, out)
    _render_failures(report, out)
    measured = not any(b.kind == "not_measured" for b in blockers)
    if measured:
        _render_comparisons(report, out)
        _render_audit(report, out)
        _render_gaps(report, out)
    if report.probe_comparison:
        out.blank()
        for line in probe_lines(report.probe_comparison):
            out.line(line)
    for line in [*(decision.warnings if decision else []), *report.notes]:
        out.line(line, indent="⚠ ")
    if decision:
        out.blank()
        out.line(decision.recommendation, style="bold")


def _render_variants(report: Report, out: Printer) -> None:
    out.blank()
    out.line("Variants")
    out.line(COMPOSITE_NOTE, indent=_INDENT)
    for v in report.variants:
        means = v.layer_means
        cost_txt = known_cost_text(v.cost.known_usd, v.cost.tasks_with_unknown_cost)
        cached = f" · {v.cached} from the response cache" if v.cached else ""
        out.line(f"{v.name} · {v.role} · {v.tasks} tasks · {v.errors} errors{cached}")
        layers = " · ".join(
            f"{name} {_fmt(means.get(name))}" if means.get(name) is not None else f"{name} absent"
            for name in defaults.LAYERS
        )
        out.line(f"composite {_fmt(means.get('composite'))} · {layers}", indent=_INDENT)
        sets = ", ".join(f"{k} {n}" for k, n in v.layer_sets.items())
        latency = _fmt(v.latency_ms.p50, ".0f") + " ms" if v.latency_ms else "unknown"
        out.line(f"scored from {sets or 'nothing'} · agent cost {cost_txt} · latency p50 {latency}", indent=_INDENT)
        out.line(f"{_pass_rates(report, v.name, v.assertion_pass_rate)}", indent=_INDENT)
        if v.outputs_truncated:
            limit = report.run.config.max_graded_output_chars
            out.line(
                f"{v.outputs_truncated} output(s) longer than maxGradedOutputChars ({limit}) were graded and "
                "judged on their first characters only (stored whole)",
                indent=_INDENT,
            )


def _pass_rates(report: Report, variant: str, assertion_rate: float | None) -> str:
    """The two pass rates, each named for what it counts: the weighted share of all assertions
    that passed, and the tasks whose every assertion passed (the Markdown's and HTML's pass rate)."""
    stats = report.statistics.variants.get(variant) if report.statistics else None
    pr = stats.pass_rate if stats else None
    tasks = f"{pr.passed}/{pr.n} ({percent(pr.rate)})" if pr and pr.n else "unknown"
    return f"assertions passed {percent(assertion_rate)} (weighted) · tasks passing every assertion {tasks}"


def _render_failures(report: Report, out: Printer) -> None:
    """Errored tasks per variant, counted by cause with the first message of each."""
    rows = [(v.name, cause, c) for v in report.variants for cause, c in v.errors_by_cause.items()]
    if not rows:
        return
    out.blank()
    out.line("Failed tasks (not graded, left out of every comparison)")
    for name, cause, c in rows:
        out.line(f"{name}: {c.count} {cause} — first: {c.first}", indent=_INDENT)


def _ci(diff: BootstrapEstimate, method: Literal["percentile", "bca"]) -> str:
    ci = diff.bca if method == "bca" else diff.percentile
    if ci.low is None or ci.high is None:
        return "unknown"
    return f"[{ci.low:+.2f}, {ci.high:+.2f}]"


def _render_comparisons(report: Report, out: Printer) -> None:
    if report.comparisons and report.statistics:
        cfg = report.statistics.config
        method = cfg.ci_method
        out.blank()
        out.line(
            f"Paired comparisons · {int(cfg.ci_level * 100)}% {'BCa' if method == 'bca' else method} CI · "
            f"B={cfg.bootstrap_samples} · seed {cfg.seed} · p: composite first"
        )
        table_width = len(_INDENT) + sum(w for _, w, _ in _COLUMNS) + len(_COLUMNS) - 1
        for comp in report.comparisons:
            out.line(f"{comp.treatment} vs {comp.control}")
            if not comp.composite_comparable:
                out.line(str(comp.comparability_note), indent="⚠ ")
            rows = [
                [
                    name,
                    str(m.n_pairs),
                    _fmt(m.control_mean),
                    _fmt(m.treatment_mean),
                    _fmt(m.diff.estimate, "+.2f"),
                    _ci(m.diff, method),
                    _fmt(m.p_adjusted, ".4f"),
                    _fmt(m.d_z),
                    "yes" if m.significant else "no",
                ]
                for name, m in comp.metrics.items()
            ]
            if out.width >= table_width:
                out.line(_INDENT + " ".join(h.rjust(w) if r else h.ljust(w) for h, w, r in _COLUMNS).rstrip())
                for row in rows:
                    out.line(
                        _INDENT
                        + " ".join(
                            c.rjust(w) if r else c.ljust(w) for c, (_, w, r) in zip(row, _COLUMNS, strict=True)
                        ).rstrip()
                    )
            else:  # too narrow for columns: one wrapped line per metric
                for row in rows:
                    out.line(
                        f"{row[0]}: "
                        + " · ".join(f"{h} {c}" for c, (h, _, _) in zip(row[1:], _COLUMNS[1:], strict=True)),
                        indent=_INDENT,
                    )
    if tradeoffs := ReportView(report).tradeoffs:
        out.line(TRADEOFF_HEADER)
        for line in tradeoffs:
            out.line(line, indent=_INDENT)
    for line in report.verdict.rationale if report.verdict else []:
        out.line(line, indent="  · ")


def _render_gaps(report: Report, out: Printer) -> None:
    gaps = {g.variant: g for g in report.gaps.variants} if report.gaps else {}
    cov = {c.variant: c for c in report.coverage.variants} if report.coverage else {}
    if not gaps and not cov:
        return
    out.blank()
    out.line("Knowledge gaps and coverage")
    for name in [v.name for v in report.variants]:
        g, c = gaps.get(name), cov.get(name)
        by_source = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in g.samples_by_source.items() if n) if g else ""
        uncovered = list(c.uncovered) if c else []
        more = f" +{len(uncovered) - 4} more" if len(uncovered) > 4 else ""
        gap_txt = (
            (
                f"gap rate {percent(g.gap_rate)} ({g.samples_with_gap}/{g.executed}) · weighted "
                f"{percent(g.weighted_gap_rate)} · by source: {by_source or 'none'} · confidence {g.confidence} · "
                f"hedging {g.hedging_mode}"
            )
            if g
            else ("gap rate unknown (?/?) · weighted unknown · by source: none · confidence unknown · hedging unknown")
        )
        cov_txt = f"coverage {percent(c.rate)} ({c.covered}/{c.total})" if c else "coverage unknown (?/?)"
        out.line(
            f"{name}: {gap_txt} · {cov_txt} · uncovered: {', '.join(uncovered[:4]) + more or 'none'}", indent=_INDENT
        )
    section = report.gaps or report.coverage
    wm = section.watermark if section else report.run.watermark
    out.line(f"gap rate and coverage depend on: sample set {', '.join(wm.paths)} · {wm.count} samples · {wm.short}")
    out.line(wm.warning, indent="⚠ ")
    for variant, summary in gaps.items():
        if summary.soft_signal_note:
            out.line(f"{variant}: {summary.soft_signal_note}")


def _render_audit(report: Report, out: Printer) -> None:
    if report.audit is None:
        return
    checks = dict(report.audit)
    out.line(
        "methodology audit · "
        + " · ".join(f"{name.replace('_', ' ')}: {check.status}" for name, check in checks.items())
    )
    for name, check in checks.items():
        if check.status in ("warn", "fail"):
            out.line(f"{name.replace('_', ' ')} ({check.status}): {check.detail}", indent=_INDENT)


def probe_lines(section: ProbeComparison) -> list[str]:
    """The lines of the probe-vs-human side-by-side section (``Report.probe_comparison``)."""
    lines = ["Probe vs human samples (gap-signal spec §9) — side by side, never one number"]
    if section.note:
        lines.append(f"  {section.note}")
    for row in section.variants:
        lines.append(f"  {row.variant}:")
        for label, side, how in (
            ("human samples", row.human, "knowmeter eval with your own sample file"),
            ("probe questions", row.probe, f"knowmeter probe && knowmeter eval --samples {defaults.PROBE_OUT}"),
        ):
            if side is None:
                lines.append(f"    {label}: no complete run of this variant yet ({how})")
                continue
            wm = side.watermark
            lines.append(
                f"    {label}: gap rate {percent(side.gap_rate)} ({side.samples_with_gap}/"
                f"{side.executed}) · run {side.run_id} · sample set {', '.join(wm.paths)} · "
                f"{wm.count} samples · {wm.short}"
            )
        if row.files_only_probe is not None:
            lines.append(f"    files reached only by probe questions: {', '.join(row.files_only_probe) or 'none'}")
            lines.append(f"    files neither set reached: {', '.join(row.files_unreached or []) or 'none'}")
    lines.append(f"  ⚠ {section.warning}")
    return lines
