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


def _pct(v: Any) -> str:
    return "unknown" if v is None else f"{100 * float(v):.1f}%"


def render_terminal(report: dict[str, Any], console: Console) -> None:
    """Print the report: verdict line, run line, variants, comparisons, gaps, coverage."""
    verdict = report.get("verdict")
    if verdict:
        console.print(f"[bold]{verdict.get('level', '?')}[/bold] · {verdict.get('headline', '')}")
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
                      f"{layers}\n({sets or 'none scored'})", _pct(v.get("assertion_pass_rate")), cost_txt,
                      _fmt(lat.get("p50"), ".0f") + " ms" if lat else "unknown")
    console.print(table)
    for line in report.get("terminal_lines", []):
        console.print(line, markup=False, highlight=False)
