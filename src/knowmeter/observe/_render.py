"""The terminal view of a health report: one table row per skill, then the trace-set watermark.

Bands of underpowered skills (< 5 segments) are printed dim with ``?`` — indicative only (gap
spec §5) — so a red from one segment does not read like a red from fifty."""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from knowmeter.observe._report import HealthReport, SkillHealth

from knowmeter.printable import printable

_BAND_STYLE = {"green": "green", "amber": "yellow", "red": "red"}


def _safe(text: str) -> str:
    """A trace's text as a table cell: control characters escaped, rich markup not interpreted."""
    from rich.markup import escape

    return escape(printable(text))


_SKIPPED_SHOWN = 5  # skipped files named under the table (the JSON report lists every one)


def _capped(lines: list[str], header: str) -> list[str]:
    """``header`` and the first ``_SKIPPED_SHOWN`` of ``lines``, indented, with how many more there
    are; nothing when there are none."""
    if not lines:
        return []
    shown = lines[:_SKIPPED_SHOWN]
    more = len(lines) - len(shown)
    return [header, *(f"  {line}" for line in shown), *([f"  … and {more} more"] if more else [])]


def _pct(rate: float | None) -> str:
    return "–" if rate is None else f"{rate:.1%}"


def _count(n: int) -> str:
    if n >= 10**15:  # beyond any real count (an edited trace): its order of magnitude
        return f"~1e{int(math.log10(n))}"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    return f"{n / 1e3:.1f}k" if n >= 10_000 else str(n)


def _band(h: SkillHealth) -> str:
    if h.band is None:
        return "–"
    if h.band_indicative:
        return f"[dim italic]{h.band}?[/dim italic]"
    return f"[bold {_BAND_STYLE[h.band]}]{h.band}[/bold {_BAND_STYLE[h.band]}]"


def _row(h: SkillHealth, with_kb: bool, with_cost: bool) -> list[str]:
    g = h.gaps
    by = g.signals_by_source
    signals = "/".join(str(by.get(s, 0)) for s in ("failed_search", "explicit_marker", "hedging", "repeated_failure"))
    gap = "–" if g.gap_rate is None else f"{g.gap_rate:.1%} ({g.samples_with_gap}/{g.executed})"
    row = [
        _safe(h.skill),
        f"{h.segments} ({h.sessions})",
        str(h.tool_calls),
        _pct(h.tool_failure_rate),
        gap,
        _pct(g.weighted_gap_rate),
        signals,
    ]
    if with_kb:
        c = h.coverage
        row.append("–" if c is None or c.rate is None else f"{c.rate:.0%} ({c.covered}/{c.total})")
    return [*row, _tokens(h), *([_cost(h)] if with_cost else []), h.confidence, _band(h)]


def _tokens(h: SkillHealth) -> str:
    """``2.7M / 23.5k`` (in / out); ``+?`` when some segments' usage is unknown; ``?`` when none is known."""
    t = h.tokens
    if h.segments and t.segments_without_usage == h.segments:
        return "?"
    known = f"{_count(t.input_tokens + t.cache_read_tokens + t.cache_creation_tokens)} / {_count(t.output_tokens)}"
    return known + ("+?" if t.segments_without_usage else "")


def _any_cost(report: HealthReport) -> bool:
    return any(h.cost_usd is not None for h in report.skills)


def _cost(h: SkillHealth) -> str:
    """``$0.79``; ``+?`` when some segments' cost is unknown; ``?`` when none is known."""
    if h.cost_usd is None:
        return "?"
    return f"${h.cost_usd:,.2f}" + ("+?" if h.segments_without_cost else "")


def top_gaps(h: SkillHealth, limit: int = 3) -> list[str]:
    """The skill's most frequent failed-search targets (``Grep "x" ×4``)."""
    counts: Counter[str] = Counter()
    for s in h.gaps.signals:
        if s.source == "failed_search":
            counts[f'{s.tool} "{s.target[:60]}"'] += s.occurrences
    return [f"{what} ×{n}" for what, n in counts.most_common(limit)]


def render_health(report: HealthReport, console: Console) -> None:
    """Print the report: the per-skill table, the watermark lines, then notes."""
    from rich.table import Table

    from knowmeter.watermark import WATERMARK_WARNING

    ts = report.trace_set
    with_kb = ts.kb is not None
    with_cost = _any_cost(report)  # no column of "?" only: a note says the cost is unknown
    table = Table(title="Skill health from real usage traces", title_justify="left")
    cols = [
        "skill",
        "segs (sess)",
        "calls",
        "tool fail",
        "gap rate",
        "weighted",
        "fs/em/hd/rf",
        *(["coverage"] if with_kb else []),
        "tokens in/out",
        *(["cost"] if with_cost else []),
        "confidence",
        "health",
    ]
    for c in cols:
        table.add_column(c, justify="left" if c in ("skill", "health", "confidence") else "right")
    for h in report.skills:
        table.add_row(*_row(h, with_kb, with_cost))
    if report.overall is not None and len(report.skills) > 1:
        table.add_section()
        table.add_row(*_row(report.overall, with_kb, with_cost), style="bold")
    if report.skills:
        console.print(table)
    else:
        console.print("No segments in the trace set (check the window and --skills).")
    w = report.watermark
    console.print(
        printable(f"trace set {', '.join(w.paths)} · {ts.sessions} sessions · {w.count} segments · {w.short}"),
        markup=False,
        highlight=False,
    )
    console.print(f"⚠ {WATERMARK_WARNING}", markup=False, highlight=False)
    tops = [(h.skill, top_gaps(h)) for h in report.skills]
    lines = notes(report)
    if any(t for _, t in tops):
        lines.append("most frequent failed searches:")
        lines += [f"  {skill}: " + "; ".join(t) for skill, t in tops if t]
    for line in lines:
        console.print(printable(line), markup=False, highlight=False)


def notes(report: HealthReport) -> list[str]:
    """The lines under the table: window, filters, what was skipped, how bands are set."""
    ts = report.trace_set
    out: list[str] = []
    if ts.window["since"] or ts.window["until"]:
        out.append(f"window: {ts.window['since'] or '…'} → {ts.window['until'] or '…'} (UTC, by segment start)")
    if ts.skills:
        out.append(f"skills: {', '.join(ts.skills)}")
    if ts.kb is not None:
        out.append(f"coverage of {ts.kb} (files matched by their path inside it)")
    if ts.undated_sessions:
        out.append(f"{ts.undated_sessions} session(s) without timestamps left out of the window")
    if ts.skipped_by_mtime:
        out.append(f"{ts.skipped_by_mtime} file(s) last written before the window, not read")
    out += _capped(
        ts.skipped_files, f"{len(ts.skipped_files)} file(s) skipped (not agent traces or unreadable; --json lists all):"
    )
    out += _capped(
        ts.orphan_subagents,
        f"{len(ts.orphan_subagents)} subagent transcript(s) whose session file is absent, analysed as "
        "sessions of their own:",
    )
    out += _capped(
        ts.bad_lines, f"{len(ts.bad_lines)} file(s) with corrupt or truncated lines (each passed over, the rest read):"
    )
    out += _capped(
        ts.files_without_segments,
        f"{len(ts.files_without_segments)} file(s) read that gave no segment (no agent turn in them, or none "
        "in the window or for --skills; --json lists all):",
    )
    unjudged = sum(h.gaps.hedging_unjudged for h in report.skills)
    if unjudged:
        out.append(
            f"hedging: {unjudged} Japanese candidate sentence(s) not judged — the Japanese regex alone is not "
            "shown to hold on held-out labelled logs, and observe runs no classifier; they are not counted"
        )
    retried = sum(len(h.gaps.retried) for h in report.skills)
    if retried:
        out.append(
            f"{retried} retried command(s) (the same non-search command failing in 3+ turns) listed apart in "
            "--json, not in the gap rates (--count-retried-commands counts them)"
        )
    out += _capped(
        ts.partly_read_files,
        f"{len(ts.partly_read_files)} file(s) read in part (a run repeated or several runs in one "
        "file; --json lists all):",
    )
    out.append(
        "tool fail = failed calls / calls with a verdict (calls cancelled because a parallel call failed, "
        "and calls without a result, are left out)"
    )
    out.append(
        "tokens in = input + cache read + cache write (? = unknown: a Codex session with several segments "
        "reports one total); fs/em/hd/rf = failed search / explicit marker / hedging / repeated failure signals"
    )
    if _any_cost(report):
        out.append(
            "cost = what the agent reported (Claude stream-json, cost-state records); ? = unknown: Codex "
            "reports none, and a session with several segments cannot be split between skills"
        )
    else:
        out.append(
            "cost: unknown — no segment's cost was reported (Codex reports none; a Claude session's cost "
            "cannot be split between its segments)"
        )
    g, f = report.thresholds["weighted_gap_rate"], report.thresholds["tool_failure_rate"]
    out.append(
        f"health: worse of weighted gap rate (amber ≥ {g['amber']:.0%}, red ≥ {g['red']:.0%}) and tool "
        f"failure rate (amber ≥ {f['amber']:.0%}, red ≥ {f['red']:.0%}); '?' = under 5 segments, indicative"
    )
    return out
