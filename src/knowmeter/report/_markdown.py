"""A Markdown summary fit for a pull-request comment or ``$GITHUB_STEP_SUMMARY``: the outcome,
the variant table, the paired comparisons and the gaps (with the sample-set watermark) — or a
comprehension run's per-dimension figures and verdict.
Every value is escaped for a table cell and for the HTML GitHub renders inside Markdown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowmeter.report._model import Report
from knowmeter.report._tradeoff import TRADEOFF_HEADER
from knowmeter.report._view import COMPOSITE_NOTE, ReportView

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


def _family(family: Mapping[str, Any]) -> str:
    """How one family of p-values was tested and adjusted, as report.html's statistics say it."""
    gate = f"; {family['gate']}" if family.get("gate") else ""
    return (
        f"p, family {family.get('name')}: paired permutation (sign-flip) test of "
        f"{', '.join(family.get('metrics', []))} at α {family.get('level')} — {family.get('method')}{gate}"
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
        out += [f"## knowmeter: **{md(o.outcome)}**", "", md(o.headline), ""]
        out += [f"**{md(o.recommendation)}**", ""] if o.recommendation else []
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
    if view.subset_note:
        out += [f"⚠ {md(view.subset_note)}", ""]
    if view.comprehension is not None:  # no composite or assertions to show: the section's own figures
        return "\n".join(out + _comprehension(view.comprehension)) + "\n"
    if view.spend:
        out += [md(view.spend), ""]
    out += [
        "| variant | role | composite | tasks passing every assertion | assertions passed (weighted) | errors "
        "| agent cost known | agent cost unknown |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for v in view.variants:
        cost = "unknown" if v.cost_known_usd is None else f"${v.cost_known_usd:.4f}"
        passed, n = v.pass_rate_counts
        tasks = f"{_pct(v.pass_rate)} ({passed}/{n})" if v.pass_rate is not None else "unknown"
        out.append(
            f"| {md(v.name)} | {md(v.role)} | {_num(v.layer_means.get('composite'))} | {tasks} | "
            f"{_pct(v.assertion_pass_rate)} | {v.errors} | {cost} | {v.cost_unknown_tasks} tasks |"
        )
    out += ["", f"> {md(COMPOSITE_NOTE)}"]
    for c in view.comparisons:
        out += ["", f"### {md(c.treatment)} vs {md(c.control)}", ""]
        if not c.comparable and c.comparability_note:
            out += [f"⚠ {md(c.comparability_note)}", ""]
        out += [
            "| metric | pairs | Δ | CI | permutation p (adj., composite first) | significant |",
            "|---|---|---|---|---|---|",
        ]
        for m in c.metrics:
            ci = (
                "unknown"
                if m.diff.low is None or m.diff.high is None
                else f"[{m.diff.low:+.2f}, {m.diff.high:+.2f}] {md(m.diff.method)} B={m.diff.b} seed {m.diff.seed}"
            )
            sig = "unknown" if m.significant is None else ("yes" if m.significant else "no")
            out.append(
                f"| {md(m.metric)} | {m.n_pairs} | {_num(m.diff.estimate, '+.2f')} | {ci} | "
                f"{_num(m.p_adjusted, '.4f')}{f' ({m.p_method})' if m.p_method else ''} | {sig} |"
            )
        out += ["", *(f"- {md(_family(f))}" for f in c.families)]
    if view.tradeoffs:
        out += ["", "### Trade-off", "", f"> {md(TRADEOFF_HEADER)}", "", *(f"- {md(line)}" for line in view.tradeoffs)]
    if view.gaps:
        out += [
            "",
            "### Knowledge gaps and coverage",
            "",
            f"> depends on sample set {md(wm.id)} ({wm.count} samples). ⚠ {md(wm.warning)}",
            "",
            "| variant | gap rate | confidence | hedging | coverage | uncovered files |",
            "|---|---|---|---|---|---|",
        ]
        for g in view.gaps:
            row = view.coverage_for(g.variant)
            cov, unc = "unknown", "unknown"
            if row is not None:
                cov = f"{_pct(row.rate)} ({row.covered}/{row.total})"
                more = f" +{len(row.uncovered) - 5}" if len(row.uncovered) > 5 else ""
                unc = (", ".join(md(u) for u in row.uncovered[:5]) or "none") + more
            out.append(
                f"| {md(g.variant)} | {_pct(g.gap_rate)} ({g.samples_with_gap}/{g.executed}) | "
                f"{g.confidence or 'unknown'} | {g.hedging_mode or 'unknown'} | {cov} | {unc} |"
            )
    return "\n".join(out) + "\n"


def _rate(arm: Mapping[str, Any]) -> str:
    wilson = arm.get("wilson")
    ci = f" [{wilson[0]:.2f}, {wilson[1]:.2f}]" if wilson else ""
    return f"{arm['cases_passed']}/{arm['cases_graded']}{ci}" if arm["cases_graded"] else "unknown"


def _comprehension(comp: Mapping[str, Any]) -> list[str]:
    """A comprehension run's figures: per dimension and overall, each arm's cases passed (Wilson
    interval), the paired difference and McNemar p (Holm across dimensions), and the verdict."""
    v = comp["verdict"]
    out = [
        "| dim | baseline: cases passed | with skill: cases passed | Δ pass rate | McNemar p | Holm p |",
        "|---|---|---|---|---|---|",
    ]
    blocks = [*comp["dimensions"].items(), ("all", comp["overall"])]
    for dim, b in blocks:
        p = b["paired"]
        out.append(
            f"| {md(dim)} | {_rate(b['baseline'])} | {_rate(b['with_skill'])} | "
            f"{_num(p['difference_in_pass_rate'], '+.2f')} | {_num(p['mcnemar'].get('p_value'), '.3g')} | "
            f"{_num(p.get('p_holm'), '.3g') if dim != 'all' else '—'} |"
        )
    named = [
        f"{label} {', '.join(v[f'{key}_dimensions'])}"
        for label, key in (("failing", "failing"), ("unverified", "unverified"), ("not covered", "not_covered"))
        if v[f"{key}_dimensions"]
    ]
    score = "unknown" if v["eval_score"] is None else f"{v['eval_score']}/5"
    out += [
        "",
        f"verdict **{md(v['level'])}** — {md(v['reasons'][0])}",
        "",
        *(f"- ⚠ {md(c)}" for c in v["caveats"]),
        f"- named exceptions: {md('; '.join(named) or 'none')}",
        f"- eval\\_score {score} · eval\\_failed\\_ids {md(', '.join(v['eval_failed_ids']) or 'none')}",
    ]
    return out
