"""A Markdown summary fit for a pull-request comment or ``$GITHUB_STEP_SUMMARY``: the outcome,
the variant table, the paired comparisons and the gaps (with the sample-set watermark).
Every value is escaped for a table cell and for the HTML GitHub renders inside Markdown."""

from __future__ import annotations

from typing import Any

from knowmeter.report._model import Report
from knowmeter.report._view import ReportView

_ESCAPES = (
    ("\\", "\\\\"),
    ("&", "&amp;"),
    ("<", "&lt;"),
    (">", "&gt;"),
    ("|", "\\|"),
    ("`", "\\`"),
    ("*", "\\*"),
    ("_", "\\_"),
    ("[", "\\["),
    ("]", "\\]"),
)


def md(value: Any) -> str:
    """Text safe in a Markdown table cell (one line, no live markup)."""
    text = " ".join(str(value).split())
    for char, escape in _ESCAPES:
        text = text.replace(char, escape)
    return text


def _num(value: float | None, spec: str = ".2f") -> str:
    return "unknown" if value is None else format(value, spec)


def _pct(value: float | None) -> str:
    return "unknown" if value is None else f"{100 * value:.1f}%"


def markdown_summary(report: Report) -> str:
    view = ReportView(report)
    out: list[str] = []
    o = view.outcome
    if o:
        out += [f"## knowmeter: **{md(o.outcome)}**", "", md(o.headline), "", f"**{md(o.recommendation)}**", ""]
        out += [f"- ✗ {md(kind.replace('_', ' '))}: {md(message)}" for kind, message in o.blockers]
        out += [f"- ⚠ {md(w)}" for w in o.warnings]
        out += ["", f"exit code {_num(o.exit_code, 'd') if o.exit_code is not None else 'unknown'}", ""]
    else:
        out += ["## knowmeter: no verdict", ""]
    wm = view.watermark
    out += [
        f"run `{md(view.run_id)}` · {md(view.executor_label)} · {view.tasks_done}/{view.tasks_total} tasks · "
        f"sample set {md(', '.join(wm.paths))} ({wm.count} samples, {md(wm.short)})",
        "",
    ]
    if view.shard_note:
        out += [f"⚠ {md(view.shard_note)}", ""]
    out += [
        "| variant | role | composite | pass rate | errors | cost known | cost unknown |",
        "|---|---|---|---|---|---|---|",
    ]
    for v in view.variants:
        cost = "unknown" if v.cost_known_usd is None else f"${v.cost_known_usd:.4f}"
        out.append(
            f"| {md(v.name)} | {md(v.role)} | {_num(v.layer_means.get('composite'))} | {_pct(v.pass_rate)} | "
            f"{v.errors} | {cost} | {v.cost_unknown_tasks} tasks |"
        )
    for c in view.comparisons:
        out += ["", f"### {md(c.treatment)} vs {md(c.control)}", ""]
        if not c.comparable and c.comparability_note:
            out += [f"⚠ {md(c.comparability_note)}", ""]
        out += ["| metric | pairs | Δ | CI | p (adj., composite first) | significant |", "|---|---|---|---|---|---|"]
        for m in c.metrics:
            ci = (
                "unknown"
                if m.diff.low is None or m.diff.high is None
                else f"[{m.diff.low:+.2f}, {m.diff.high:+.2f}] {md(m.diff.method)} B={m.diff.b} seed {m.diff.seed}"
            )
            sig = "unknown" if m.significant is None else ("yes" if m.significant else "no")
            out.append(
                f"| {md(m.metric)} | {m.n_pairs} | {_num(m.diff.estimate, '+.2f')} | {ci} | "
                f"{_num(m.p_adjusted, '.4f')} | {sig} |"
            )
    if view.gaps:
        out += [
            "",
            "### Knowledge gaps and coverage",
            "",
            f"> depends on sample set {md(wm.id)} ({wm.count} samples). ⚠ {md(wm.warning)}",
            "",
            "| variant | gap rate | coverage | uncovered files |",
            "|---|---|---|---|",
        ]
        for g in view.gaps:
            row = view.coverage_for(g.variant)
            cov, unc = "unknown", "unknown"
            if row is not None:
                cov = f"{_pct(row.rate)} ({row.covered}/{row.total})"
                more = f" +{len(row.uncovered) - 5}" if len(row.uncovered) > 5 else ""
                unc = (", ".join(md(u) for u in row.uncovered[:5]) or "none") + more
            out.append(f"| {md(g.variant)} | {_pct(g.gap_rate)} ({g.samples_with_gap}/{g.executed}) | {cov} | {unc} |")
    return "\n".join(out) + "\n"
