"""``activation.html``: the activation report as one self-contained page (no scripts, no network),
every rate drawn as a bar with its interval in inline SVG. Every text from the run is escaped."""

from __future__ import annotations

from html import escape

from knowmeter.activation._model import ActivationReport, ArmFigures, PairedChange, Rate
from knowmeter.activation._outputs import intervals_note, wrong_line

__all__ = ["html_report", "runs_index_html"]

_STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:.25em .7em;border-bottom:1px solid #ddd;"
    "text-align:left}.v{font-weight:600}.bad{color:#a40000}small{color:#666}"
)


def _bar(rate: float | None, low: float | None, high: float | None) -> str:
    """A 160×12 bar: the rate filled, the interval as a line with end ticks (nothing when unknown)."""
    if rate is None:
        return ""
    parts = [f'<rect x="0" y="3" width="{160 * rate:.1f}" height="6" fill="#6a8fd0"/>']
    if low is not None and high is not None:
        lo, hi = 160 * low, 160 * high
        parts.append(f'<path d="M{lo:.1f} 6H{hi:.1f}M{lo:.1f} 1V11M{hi:.1f} 1V11" stroke="#222" fill="none"/>')
    return f'<svg width="160" height="12" role="img">{"".join(parts)}</svg>'


def _rate_row(name: str, r: Rate | None) -> str:
    if r is None or r.rate is None:
        return f"<tr><td>{name}</td><td>unknown (no trial)</td><td></td><td></td></tr>"
    ci = "unknown" if r.low is None or r.high is None else f"[{r.low:.2f}, {r.high:.2f}]"
    deff = "" if r.design_effect is None else f" · design effect {r.design_effect:.2f}"
    return (
        f"<tr><td>{name}</td><td class=v>{r.rate:.2f}</td><td>{ci}</td><td>{_bar(r.rate, r.low, r.high)}</td>"
        f"<td><small>{r.successes}/{r.trials} over {r.cases} case(s){deff}</small></td></tr>"
    )


def _arm(f: ArmFigures, title: str) -> str:
    rows = [
        _rate_row("recall", f.recall),
        _rate_row("false-activation rate", f.false_activation_rate),
        _rate_row("precision", f.precision),
    ]
    if f.routing_top1 is not None:
        rows.append(_rate_row("routing top-1", f.routing_top1))
    f1_ci = "" if f.f1_low is None or f.f1_high is None else f"[{f.f1_low:.2f}, {f.f1_high:.2f}]"
    f1 = "unknown" if f.f1 is None else f"{f.f1:.2f}"
    rows.append(f"<tr><td>F1</td><td class=v>{f1}</td><td>{f1_ci}</td><td>{_bar(f.f1, f.f1_low, f.f1_high)}</td></tr>")
    wrong = "".join(
        f"<li class=bad><code>{escape(c.case_id)}</code>: {escape(wrong_line(c))}</li>" for c in f.confusion
    )
    return (
        f"<h2>{escape(title)}</h2><p><small>{f.cases} case(s), {f.trials} trial(s), {f.errors} failed</small></p>"
        f"<table>{''.join(rows)}</table>" + (f"<h3>cases that went wrong</h3><ul>{wrong}</ul>" if wrong else "")
    )


def _change(part: str, c: PairedChange) -> str:
    diff = "unknown" if c.difference is None else f"{c.difference * 100:+.1f} pts"
    ci = "unknown" if c.low is None or c.high is None else f"[{c.low * 100:+.1f}, {c.high * 100:+.1f}]"
    p = "" if c.mcnemar_p is None else f"{c.mcnemar_p:.3g}"
    sig = "significant" if c.significant else ""
    return (
        f"<tr><td>{part}</td><td>{c.measure}</td><td class=v>{diff}</td><td>{ci}</td><td>{p}</td>"
        f"<td>{c.pairs} pair(s), {c.cases} case(s)</td><td>{sig}</td></tr>"
    )


def html_report(report: ActivationReport) -> str:
    """The page (see the module docstring)."""
    skill = escape(report.skill)
    head = (
        f"<h1>{escape(report.verdict)} — activation of <code>{skill}</code></h1><p>{report.cases} case(s) × "
        f"{report.repeats} repeat(s), executor {escape(report.executor)}"
        f"{'' if report.model is None else ' (' + escape(report.model) + ')'}; activation counted from "
        f"{report.counts}; {escape(intervals_note(report))}</p><p><small>run {escape(report.run_id)} · distractors: "
        f"{escape(', '.join(report.distractors) or 'none')}</small></p>"
    )
    arms = "".join(_arm(f, f"version {f.arm}" if len(report.arms) > 1 else "figures") for f in report.arms)
    changes = ""
    if report.comparisons:
        rows = "".join(_change(comp.part, c) for comp in report.comparisons for c in comp.changes)
        changes = (
            "<h2>changes (B − A), paired by case and repeat</h2><table><tr><th>part</th><th>measure</th>"
            f"<th>difference</th><th>interval</th><th>McNemar p</th><th>n</th><th></th></tr>{rows}</table>"
        )
    reasons = "".join(f"<li>{escape(r)}</li>" for r in [*report.reasons, *report.notes])
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>activation {skill}</title>"
        f"<style>{_STYLE}</style></head><body>{head}{arms}{changes}<ul>{reasons}</ul></body></html>\n"
    )


def runs_index_html(reports: list[ActivationReport], link: str = "/activation/") -> str:
    """A page listing activation runs (newest first): verdict, skill, case set, recall and false
    activations per version, each run linking to ``link + run_id``."""
    rows = []
    for r in reports:
        figures = "; ".join(
            f"{escape(f.arm)}: recall {_short(f.recall)}, false activations {_short(f.false_activation_rate)}"
            for f in r.arms
        )
        run, cases = escape(r.run_id), f"{r.case_set.count} case(s) · {escape(r.case_set.sha256[:8])}"
        rows.append(
            f"<tr><td><a href='{link}{run}'>{run}</a></td><td class=v>{escape(r.verdict)}</td>"
            f"<td><code>{escape(r.skill)}</code></td><td>{cases}</td><td>{figures}</td></tr>"
        )
    body = (
        "<table><tr><th>run</th><th>verdict</th><th>skill</th><th>case set</th><th>figures</th></tr>"
        + "".join(rows)
        + "</table>"
        if rows
        else "<p>no activation runs in this store yet: run knowmeter activation</p>"
    )
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>knowmeter activation runs</title>"
        f"<style>{_STYLE}</style></head><body><p><a href='/'>Runs</a> · <a href='/trends'>Trends</a></p>"
        f"<h1>Activation runs</h1>{body}</body></html>\n"
    )


def _short(r: Rate) -> str:
    return "unknown" if r.rate is None else f"{r.rate:.2f}"
