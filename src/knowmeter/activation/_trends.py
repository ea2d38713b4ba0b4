"""Recall and false-activation rate across the stored activation runs of one skill on one case
set (same skill name, same case-set hash): a number is only compared with numbers measured on
the same cases. Read from each run's ``activation.json``; a run without one (still running,
killed before its report) is skipped and counted."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from knowmeter.activation._model import ActivationReport, Rate

__all__ = ["TrendPoint", "activation_trends", "trend_lines"]


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """One version of the skill in one run."""

    run_id: str
    created_at: str | None
    arm: str
    recall: Rate
    false_activation_rate: Rate
    verdict: str


def activation_trends(runs_root: Path) -> tuple[dict[tuple[str, str], list[TrendPoint]], int]:
    """``{(skill, case-set sha256): [points, oldest first]}`` and how many runs had no readable report."""
    groups: dict[tuple[str, str], list[TrendPoint]] = {}
    skipped = 0
    for folder in sorted(runs_root.iterdir()) if runs_root.is_dir() else []:
        path = folder / "activation.json"
        try:
            report = ActivationReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError):
            skipped += folder.is_dir()
            continue
        key = (report.skill, report.case_set.sha256)
        for f in report.arms:
            groups.setdefault(key, []).append(
                TrendPoint(report.run_id, report.created_at, f.arm, f.recall, f.false_activation_rate, report.verdict)
            )
    return groups, skipped


def _rate(r: Rate) -> str:
    if r.rate is None:
        return "unknown"
    ci = "" if r.low is None or r.high is None else f" [{r.low:.2f}, {r.high:.2f}]"
    return f"{r.rate:.2f}{ci}"


def trend_lines(runs_root: Path) -> list[str]:
    """The trends as terminal lines: one block per skill and case set."""
    groups, skipped = activation_trends(runs_root)
    lines = [] if groups else [f"no activation reports in {runs_root}; run knowmeter activation first"]
    for (skill, sha), points in sorted(groups.items()):
        lines.append(f"skill {skill!r} on case set {sha[:8]} ({len({p.run_id for p in points})} run(s)):")
        for p in points:
            lines.append(
                f"  {p.run_id} {p.arm}: recall {_rate(p.recall)}, false activations {_rate(p.false_activation_rate)}"
                f" ({p.verdict})"
            )
    if skipped:
        lines.append(f"{skipped} run(s) without a readable activation.json were skipped")
    return lines
