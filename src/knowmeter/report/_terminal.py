"""The terminal summary of a report (rich). The verdict line comes first."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


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
    """Print the report: verdict line, run line, variants, comparisons, gaps, coverage."""
    verdict = report.get("verdict")
    if verdict:
        headline = verdict.get("headline", "")
        level = verdict.get("level", "?")
        console.print(f"[bold]{headline if headline.startswith(level) else level + ' · ' + headline}[/bold]",
                      highlight=False)
    run = report["run"]
    wm = run["watermark"]
    ex = run["executor"]
    model = f" · model {ex['model']}" if ex.get("model") else ""
    console.print(f"run {run['id']} · {ex['name']} ({ex['label']}){model}"
                  f" · {run['tasks_done']}/{run['tasks_total']} tasks · seed {run['seed']}")
    console.print(f"sample set {', '.join(wm['paths'])} · {wm['count']} samples · {wm['short']}")

    table = Table(title="Variants", title_justify="left")
    for col in ("variant", "role", "tasks", "errors", "composite", "layer means (n by layer set)", "pass rate",
                "cost (known)", "latency p50"):
        table.add_column(col, overflow="fold")
    for v in report["variants"]:
        means = v.get("layer_means") or {}
        cost = v.get("cost") or {}
        cost_txt = _fmt(cost.get("known_usd"), ".4f")
        if cost.get("tasks_with_unknown_cost"):
            cost_txt += f" +{cost['tasks_with_unknown_cost']} unknown"
        lat = v.get("latency_ms") or {}
        layers = " · ".join(f"{name} {_fmt(means.get(name))}" if means.get(name) is not None else f"{name} absent"
                            for name in ("fact", "behavior", "judge"))
        sets = ", ".join(f"{k}: {n}" for k, n in (v.get("layer_sets") or {}).items())
        table.add_row(v["name"], v["role"], str(v["tasks"]), str(v["errors"]), _fmt(means.get("composite")),
                      f"{layers}\n({sets or 'none scored'})", percent(v.get("assertion_pass_rate")), cost_txt,
                      _fmt(lat.get("p50"), ".0f") + " ms" if lat else "unknown")
    console.print(table)
    _render_comparisons(report, console)
    _render_audit(report, console)
    _render_gaps(report, console)
    for line in report.get("terminal_lines", []):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if verdict:
        console.print(f"[bold]{verdict.get('ship_recommendation', '')}[/bold]", highlight=False)


def _ci(diff: dict[str, Any], method: str) -> str:
    ci = diff.get(method) or diff.get("percentile") or {}
    if ci.get("low") is None:
        return "CI unknown"
    return f"[{ci['low']:+.2f}, {ci['high']:+.2f}]"


def _render_comparisons(report: dict[str, Any], console: Console) -> None:
    comparisons = report.get("comparisons") or []
    if not comparisons:
        return
    cfg = (report.get("statistics") or {}).get("config") or {}
    method = cfg.get("ci_method", "bca")
    level = cfg.get("ci_level", 0.95)
    table = Table(title=f"Paired comparisons ({int(level * 100)}% {method} CI, B={cfg.get('bootstrap_samples')}, "
                        f"seed {cfg.get('seed')}; p Holm-adjusted)", title_justify="left")
    for col in ("treatment vs control", "metric", "pairs", "control", "treatment", "Δ", "CI", "p (adj)", "d_z",
                "significant"):
        table.add_column(col)
    for comp in comparisons:
        for name, m in (comp.get("metrics") or {}).items():
            table.add_row(f"{comp['treatment']} vs {comp['control']}", name, str(m.get("n_pairs")),
                          _fmt(m.get("control_mean")), _fmt(m.get("treatment_mean")),
                          _fmt((m.get("diff") or {}).get("estimate"), "+.2f"), _ci(m.get("diff") or {}, method),
                          _fmt(m.get("p_adjusted"), ".4f"), _fmt(m.get("d_z")), "yes" if m.get("significant") else "no")
        if not comp.get("composite_comparable", True):
            console.print(f"⚠ {comp.get('comparability_note')}", highlight=False)
    console.print(table)
    verdict = report.get("verdict") or {}
    for line in verdict.get("rationale", []):
        console.print(f"  · {line}", markup=False, highlight=False)


def _render_gaps(report: dict[str, Any], console: Console) -> None:
    gaps = {g["variant"]: g for g in (report.get("gaps") or {}).get("variants", [])}
    cov = {c["variant"]: c for c in (report.get("coverage") or {}).get("variants", [])}
    if not gaps and not cov:
        return
    table = Table(title="Knowledge gaps and coverage", title_justify="left")
    for col in ("variant", "gap rate", "weighted", "samples by source", "confidence", "hedging", "coverage",
                "uncovered files"):
        table.add_column(col, overflow="fold")
    for name in [v["name"] for v in report["variants"]]:
        g = gaps.get(name) or {}
        c = cov.get(name) or {}
        by_source = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in (g.get("samples_by_source") or {}).items() if n)
        uncovered = c.get("uncovered") or []
        table.add_row(name, f"{percent(g.get('gap_rate'))} ({g.get('samples_with_gap', '?')}/{g.get('executed', '?')})",
                      percent(g.get("weighted_gap_rate")), by_source or "none", str(g.get("confidence", "unknown")),
                      str(g.get("hedging_mode", "unknown")),
                      f"{percent(c.get('rate'))} ({c.get('covered', '?')}/{c.get('total', '?')})",
                      ", ".join(uncovered[:4]) + (f" +{len(uncovered) - 4}" if len(uncovered) > 4 else "") or "none")
    console.print(table)
    wm = (report.get("gaps") or report.get("coverage") or {}).get("watermark") or report["run"]["watermark"]
    console.print(f"gap rate and coverage depend on: sample set {', '.join(wm['paths'])} · {wm['count']} samples · "
                  f"{wm['short']}", highlight=False)
    console.print(f"⚠ {wm['warning']}", highlight=False)
    for name, g in gaps.items():
        if g.get("soft_signal_note"):
            console.print(f"{name}: {g['soft_signal_note']}", highlight=False)


def _render_audit(report: dict[str, Any], console: Console) -> None:
    audit = report.get("audit") or {}
    if not audit:
        return
    parts = [f"{name.replace('_', ' ')}: {check.get('status')}" for name, check in audit.items()]
    console.print("methodology audit · " + " · ".join(parts), highlight=False)
    for name, check in audit.items():
        if check.get("status") in ("warn", "fail"):
            console.print(f"  {name.replace('_', ' ')} ({check['status']}): {check.get('detail')}", highlight=False)
