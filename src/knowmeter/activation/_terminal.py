"""The terminal summary of an activation report."""

from __future__ import annotations

from knowmeter.activation._model import ActivationReport, ArmFigures, Rate
from knowmeter.activation._outputs import intervals_note

__all__ = ["summary_lines"]


def _rate(r: Rate | None) -> str:
    if r is None or r.rate is None:
        return "unknown (no trial)"
    ci = "interval unknown" if r.low is None or r.high is None else f"[{r.low:.2f}, {r.high:.2f}]"
    return f"{r.rate:.2f} {ci}  ({r.successes}/{r.trials} over {r.cases} case(s))"


def _arm(f: ArmFigures, label: str) -> list[str]:
    f1 = "unknown" if f.f1 is None else f"{f.f1:.2f}"
    if f.f1 is not None and f.f1_low is not None and f.f1_high is not None:
        f1 += f" [{f.f1_low:.2f}, {f.f1_high:.2f}]"
    lines = [
        f"{label}: {f.cases} case(s), {f.trials} trial(s), {f.errors} failed",
        f"  recall                 {_rate(f.recall)}",
        f"  false-activation rate  {_rate(f.false_activation_rate)}",
        f"  precision              {_rate(f.precision)}",
        f"  F1                     {f1}",
    ]
    if f.routing_top1 is not None:
        lines.append(f"  routing top-1          {_rate(f.routing_top1)}")
    for c in f.confusion:
        want = "should fire" if c.should_trigger else "should not fire"
        other = f"; loaded instead: {', '.join(c.loaded_instead)}" if c.loaded_instead else ""
        failed = f"; {c.errors} task(s) failed" if c.errors else ""
        if c.top1_misses:
            failed += f"; {c.expected_winner} not loaded first {c.top1_misses}/{c.trials}"
        lines.append(f"  ✗ {c.case_id}: {want}, fired {c.activated}/{c.trials}{other}{failed}")
    return lines


def summary_lines(report: ActivationReport) -> list[str]:
    """Headline, per-arm figures (intervals: clustered Wilson at the report's level), the A/B
    changes and the verdict's reasons."""
    lines = [
        f"{report.verdict} — activation of skill {report.skill!r}: {report.cases} case(s) × {report.repeats} "
        f"repeat(s), {report.executor}; activation counted from: {report.counts}; {intervals_note(report)}",
    ]
    names = {"A": "A (control)", "B": "B (treatment)"}
    for f in report.arms:
        lines += _arm(f, names.get(f.arm, f.arm) if len(report.arms) > 1 else "skill")
    for comp in report.comparisons[1:]:
        lines.append(
            f"part {comp.part}: "
            + "; ".join(
                f"{c.measure} {'unknown' if c.difference is None else f'{c.difference * 100:+.1f} pts'}"
                for c in comp.changes
            )
        )
    lines += [f"  {r}" for r in report.reasons]
    lines += [f"note: {n}" for n in report.notes]
    return lines
