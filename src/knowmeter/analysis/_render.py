"""Plain-text views of a variant's gaps and coverage (gap-signal spec §7.2–7.3 style).

Both start with the figure and its watermark; there is no way to print one without the other.
Every line is made ``printable``: contexts, targets and paths come from agent traces."""

from __future__ import annotations

from knowmeter.analysis._aggregate import GapSummary
from knowmeter.analysis._coverage import Coverage
from knowmeter.analysis._model import GapSignal
from knowmeter.printable import printable

SOURCE_LABELS = {
    "failed_search": "failed search",
    "explicit_marker": "explicit marker",
    "hedging": "hedging",
    "repeated_failure": "repeated failure",
    "retried_command": "retried command",
}


def _signal_block(s: GapSignal) -> list[str]:
    where = f"Sample {s.sample_id}" + (f" (repeat {s.repeat})" if s.repeat else "")
    head = f"{where} / turn {s.turn} / [{SOURCE_LABELS[s.source]}]"
    if s.occurrences > 1:
        head += f" ×{s.occurrences}"
    lines = [head]
    if s.source in ("failed_search", "repeated_failure", "retried_command"):
        lines.append(f"  {s.context}")
        if s.note:
            lines.append(f"  agent then said: {s.note}")
    else:
        lines.append(f"  agent output: {s.context}")
        v = s.classifier_verdict
        if v is not None:
            lines.append(
                f"  classifier: uncertain={str(v.is_uncertainty).lower()} "
                f"confidence={v.confidence:.2f} ({v.origin}) {v.reason}".rstrip()
            )
    return lines


def render_inventory(summary: GapSummary, *, limit: int | None = None) -> str:
    """The gap report of one variant: rates + watermark, classification by source, the soft-signal
    note, then every signal (the first ``limit`` when given)."""
    title = "Knowledge-gap inventory" + (f" — {summary.variant}" if summary.variant else "")
    out = [title, *summary.lines()]
    by = " · ".join(f"{SOURCE_LABELS[src]} {n}" for src, n in summary.signals_by_source.items())
    out.append(f"by source: {by}")
    mode = f"hedging: {summary.hedging_mode}"
    if summary.hedging_dropped:
        mode += f" ({summary.hedging_dropped} candidate(s) dropped by the classifier)"
    if summary.hedging_unjudged:
        mode += (
            f" — {summary.hedging_unjudged} Japanese candidate sentence(s) not judged"
            " (the Japanese regex alone is not shown to hold on held-out labelled logs; configure a hedging classifier)"
        )
    out.append(mode)
    if summary.failed_executions:
        out.append(f"{summary.failed_executions} failed execution(s) left out of the denominator")
    if summary.excluded:
        out.append("not counted as gaps: " + ", ".join(f"{k} {v}" for k, v in summary.excluded.items()))
    if summary.soft_signal_note:
        out.append(f"note: {summary.soft_signal_note}")
    shown = summary.signals if limit is None else summary.signals[:limit]
    if not shown:
        out += ["", "No gap signals."]
    for s in shown:
        out += ["", *_signal_block(s)]
    if len(shown) < len(summary.signals):
        out += ["", f"… {len(summary.signals) - len(shown)} more signal(s)"]
    if summary.retried:
        out += ["", f"Retried commands ({len(summary.retried)}; not in the gap rate — a failing test or commit loop):"]
        out += [f"  Sample {s.sample_id} / turn {s.turn}: {s.context}" for s in summary.retried]
    return "\n".join(map(printable, out))


def render_coverage(cov: Coverage, *, limit: int | None = 20) -> str:
    """Coverage of one variant: rate + watermark, per-file access counts, uncovered files."""
    title = "Knowledge coverage" + (f" — {cov.variant}" if cov.variant else "")
    out = [title, *cov.lines()]
    for f in cov.files:
        how = "injected" if f.injected else f"{f.accesses} access(es) in {f.tasks} task(s)"
        out.append(f"  {'✓' if f.accessed else '·'} {f.path} [{f.origin}] {how}")
    if cov.uncovered:
        shown = cov.uncovered if limit is None else cov.uncovered[:limit]
        out.append("uncovered: " + ", ".join(shown) + (" …" if len(shown) < len(cov.uncovered) else ""))
    return "\n".join(map(printable, out))
