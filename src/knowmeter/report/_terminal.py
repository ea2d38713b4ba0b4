"""The terminal summary of a report, designed for 80 columns.

The first line is the run's decision (``report["decision"]``: the verdict, or what stops the run
from passing), the last its recommendation — one object, so they cannot contradict. Everything
between is prose wrapped at word boundaries with a hanging indent (variants, failures, the
verdict's rationale, gaps and coverage); only the paired-comparison table has columns, and it is
printed as stacked lines when the console is narrower than the table. Every string from the
report is made ``printable`` first (agent output, variant names and file names are untrusted).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from knowmeter.decision import LABELS
from knowmeter.printable import Printer, printable_tree
from knowmeter.report._view import ReportView

#: The paired-comparison table's columns: (header, width, right-aligned).
_COLUMNS = (("metric", 9, False), ("pairs", 5, True), ("control", 7, True), ("treatment", 9, True),
            ("Δ", 7, True), ("CI", 14, False), ("p (adj)", 7, True), ("d_z", 7, True), ("sig", 3, False))
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


def render_terminal(report: dict[str, Any], console: Console) -> None:
    """Print the report: decision, run, variants, failures, comparisons and rationale, audit,
    gaps and coverage, warnings, and the recommendation last."""
    report = printable_tree({k: v for k, v in report.items() if k != "tasks"})
    out = Printer(console)
    decision = report.get("decision") or {}
    if decision:
        out.line(decision["headline"], style="bold")
    run = report["run"]
    wm = run["watermark"]
    ex = run["executor"]
    model = f" · model {ex['model']}" if ex.get("model") else ""
    out.line(f"run {run['id']} · {ex['name']} ({ex['label']}){model} · {run['tasks_done']}/{run['tasks_total']} "
             f"tasks · seed {run['seed']}")
    out.line(f"sample set {', '.join(wm['paths'])} · {wm['count']} samples · {wm['short']}")
    if shard_note := ReportView(report).shard_note:
        out.line(shard_note)
    blockers = decision.get("blockers") or []
    for b in blockers[1:]:
        out.line(f"{LABELS[b['kind']]}: {b['message']}", indent="✗ ")
    _render_variants(report, out)
    _render_failures(report, out)
    measured = not any(b["kind"] == "not_measured" for b in blockers)
    if measured:
        _render_comparisons(report, out)
        _render_audit(report, out)
        _render_gaps(report, out)
    if report.get("probe_comparison"):
        out.blank()
        for line in probe_lines(report["probe_comparison"]):
            out.line(line)
    for line in [*(decision.get("warnings") or []), *report.get("notes", [])]:
        out.line(line, indent="⚠ ")
    if decision:
        out.blank()
        out.line(decision["recommendation"], style="bold")


def _render_variants(report: dict[str, Any], out: Printer) -> None:
    out.blank()
    out.line("Variants")
    for v in report["variants"]:
        means = v.get("layer_means") or {}
        cost = v.get("cost") or {}
        cost_txt = _fmt(cost.get("known_usd"), ".4f")
        if cost.get("tasks_with_unknown_cost"):
            cost_txt += f" (+{cost['tasks_with_unknown_cost']} unknown)"
        lat = v.get("latency_ms") or {}
        cached = f" · {v['cached']} from the response cache" if v.get("cached") else ""
        out.line(f"{v['name']} · {v['role']} · {v['tasks']} tasks · {v['errors']} errors{cached}")
        layers = " · ".join(f"{name} {_fmt(means.get(name))}" if means.get(name) is not None else f"{name} absent"
                            for name in ("fact", "behavior", "judge"))
        out.line(f"composite {_fmt(means.get('composite'))} · {layers}", indent=_INDENT)
        sets = ", ".join(f"{k} {n}" for k, n in (v.get("layer_sets") or {}).items())
        out.line(f"scored from {sets or 'nothing'} · assertions passed {percent(v.get('assertion_pass_rate'))} · "
                 f"cost {cost_txt} · latency p50 {_fmt(lat.get('p50'), '.0f') + ' ms' if lat else 'unknown'}",
                 indent=_INDENT)


def _render_failures(report: dict[str, Any], out: Printer) -> None:
    """Errored tasks per variant, counted by cause with the first message of each."""
    rows = [(v["name"], cause, c) for v in report["variants"]
            for cause, c in (v.get("errors_by_cause") or {}).items()]
    if not rows:
        return
    out.blank()
    out.line("Failed tasks (not graded, left out of every comparison)")
    for name, cause, c in rows:
        out.line(f"{name}: {c['count']} {cause} — first: {c['first']}", indent=_INDENT)


def _ci(diff: dict[str, Any], method: str) -> str:
    ci = diff.get(method) or diff.get("percentile") or {}
    if ci.get("low") is None:
        return "unknown"
    return f"[{ci['low']:+.2f}, {ci['high']:+.2f}]"


def _render_comparisons(report: dict[str, Any], out: Printer) -> None:
    comparisons = report.get("comparisons") or []
    verdict = report.get("verdict") or {}
    if comparisons:
        cfg = (report.get("statistics") or {}).get("config") or {}
        method = cfg.get("ci_method", "bca")
        level = cfg.get("ci_level", 0.95)
        out.blank()
        out.line(f"Paired comparisons · {int(level * 100)}% {'BCa' if method == 'bca' else method} CI · "
                 f"B={cfg.get('bootstrap_samples')} · seed {cfg.get('seed')} · p: composite first")
        table_width = len(_INDENT) + sum(w for _, w, _ in _COLUMNS) + len(_COLUMNS) - 1
        for comp in comparisons:
            out.line(f"{comp['treatment']} vs {comp['control']}")
            if not comp.get("composite_comparable", True):
                out.line(str(comp.get("comparability_note")), indent="⚠ ")
            rows = [[name, str(m.get("n_pairs")), _fmt(m.get("control_mean")), _fmt(m.get("treatment_mean")),
                     _fmt((m.get("diff") or {}).get("estimate"), "+.2f"), _ci(m.get("diff") or {}, method),
                     _fmt(m.get("p_adjusted"), ".4f"), _fmt(m.get("d_z")), "yes" if m.get("significant") else "no"]
                    for name, m in (comp.get("metrics") or {}).items()]
            if out.width >= table_width:
                out.line(_INDENT + " ".join(h.rjust(w) if r else h.ljust(w) for h, w, r in _COLUMNS).rstrip())
                for row in rows:
                    out.line(_INDENT + " ".join(c.rjust(w) if r else c.ljust(w)
                                                for c, (_, w, r) in zip(row, _COLUMNS, strict=True)).rstrip())
            else:  # too narrow for columns: one wrapped line per metric
                for row in rows:
                    out.line(f"{row[0]}: " + " · ".join(f"{h} {c}" for c, (h, _, _) in
                                                        zip(row[1:], _COLUMNS[1:], strict=True)), indent=_INDENT)
    for line in verdict.get("rationale", []):
        out.line(line, indent="  · ")


def _render_gaps(report: dict[str, Any], out: Printer) -> None:
    gaps = {g["variant"]: g for g in (report.get("gaps") or {}).get("variants", [])}
    cov = {c["variant"]: c for c in (report.get("coverage") or {}).get("variants", [])}
    if not gaps and not cov:
        return
    out.blank()
    out.line("Knowledge gaps and coverage")
    for name in [v["name"] for v in report["variants"]]:
        g = gaps.get(name) or {}
        c = cov.get(name) or {}
        by_source = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in (g.get("samples_by_source") or {}).items() if n)
        uncovered = c.get("uncovered") or []
        more = f" +{len(uncovered) - 4} more" if len(uncovered) > 4 else ""
        out.line(f"{name}: gap rate {percent(g.get('gap_rate'))} ({g.get('samples_with_gap', '?')}/"
                 f"{g.get('executed', '?')}) · weighted {percent(g.get('weighted_gap_rate'))} · by source: "
                 f"{by_source or 'none'} · confidence {g.get('confidence', 'unknown')} · hedging "
                 f"{g.get('hedging_mode', 'unknown')} · coverage {percent(c.get('rate'))} ({c.get('covered', '?')}/"
                 f"{c.get('total', '?')}) · uncovered: {', '.join(uncovered[:4]) + more or 'none'}", indent=_INDENT)
    wm = (report.get("gaps") or report.get("coverage") or {}).get("watermark") or report["run"]["watermark"]
    out.line(f"gap rate and coverage depend on: sample set {', '.join(wm['paths'])} · {wm['count']} samples · "
             f"{wm['short']}")
    out.line(str(wm["warning"]), indent="⚠ ")
    for name, g in gaps.items():
        if g.get("soft_signal_note"):
            out.line(f"{name}: {g['soft_signal_note']}")


def _render_audit(report: dict[str, Any], out: Printer) -> None:
    audit = report.get("audit") or {}
    if not audit:
        return
    parts = [f"{name.replace('_', ' ')}: {check.get('status')}" for name, check in audit.items()]
    out.line("methodology audit · " + " · ".join(parts))
    for name, check in audit.items():
        if check.get("status") in ("warn", "fail"):
            out.line(f"{name.replace('_', ' ')} ({check['status']}): {check.get('detail')}", indent=_INDENT)


def probe_lines(section: dict[str, Any]) -> list[str]:
    """The lines of the probe-vs-human side-by-side section (``report['probe_comparison']``)."""
    lines = ["Probe vs human samples (gap-signal spec §9) — side by side, never one number"]
    if section.get("note"):
        lines.append(f"  {section['note']}")
    for row in section["variants"]:
        lines.append(f"  {row['variant']}:")
        for label, side, how in (("human samples", row["human"], "knowmeter eval with your own sample file"),
                                 ("probe questions", row["probe"],
                                  "knowmeter probe && knowmeter eval --samples probe-samples.yaml")):
            if side is None:
                lines.append(f"    {label}: no complete run of this variant yet ({how})")
                continue
            wm = side["watermark"]
            lines.append(f"    {label}: gap rate {percent(side['gap_rate'])} ({side['samples_with_gap']}/"
                         f"{side['executed']}) · run {side['run_id']} · sample set {', '.join(wm['paths'])} · "
                         f"{wm['count']} samples · {wm['short']}")
        if row["files_only_probe"] is not None:
            lines.append(f"    files reached only by probe questions: {', '.join(row['files_only_probe']) or 'none'}")
            lines.append(f"    files neither set reached: {', '.join(row['files_unreached']) or 'none'}")
    lines.append(f"  ⚠ {section['warning']}")
    return lines
