"""The health report: per-skill figures merged from the workers' partial results.

Per skill (one *sample* = one segment):

- ``tool_failure_rate`` = failed tool calls / tool calls that came back with a verdict. Calls
  cancelled because a parallel sibling failed, and calls without a result (the session ended,
  the call was interrupted) are left out of the denominator: they say nothing about the tool.
  A search that ran and found nothing (``rg`` exiting 1) is not a failure — the tool worked; it
  is a gap signal. Permission denials and user rejections are failures (``failures_by_kind``
  tells them apart).
- gap signals and rates from ``analysis.aggregate_gaps`` over the skill's segments, coverage from
  ``analysis.coverage`` over their kb accesses — both carrying the trace-set watermark.
- ``confidence`` by segment count (< 5 underpowered, < 20 low, else high, gap spec §5).
- ``cost_usd``: the cost the agent reported (Claude stream-json ``total_cost_usd``, a session's
  ``cost-state`` record) summed over the segments it belongs to — a session's cost belongs to its
  segment only when the session is that one segment (it cannot be split between skills); None when
  no segment's cost is known (Codex reports none), ``segments_without_cost`` counts the rest.
- ``band``: the worse of the weighted gap rate band and the failure-rate band (``THRESHOLDS``).
  The weighted rate (hard evidence 1.0, the agent's own hedges and markers 0.5) is used so a
  skill whose only signals are soft needs twice the share of segments to change colour.
  ``band_indicative`` when the skill is underpowered — show it softened, do not act on it.

``overall`` aggregates every segment in the report (the ``(no skill)`` row included when shown).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

from knowmeter._record import Count, Record
from knowmeter.analysis import (
    Confidence,
    Coverage,
    GapSummary,
    KnowledgeFile,
    TaskGaps,
    aggregate_gaps,
    confidence_tier,
    coverage,
)
from knowmeter.observe._results import unpack_gaps
from knowmeter.traces import USAGE_KEYS
from knowmeter.watermark import Watermark

if TYPE_CHECKING:
    from knowmeter.observe._merge import Merger, SkillTotals

Band = Literal["green", "amber", "red"]

#: Health-band thresholds: a rate at or above ``amber`` is amber, at or above ``red`` is red.
THRESHOLDS: dict[str, dict[str, float]] = {
    "weighted_gap_rate": {"amber": 0.25, "red": 0.50},
    "tool_failure_rate": {"amber": 0.10, "red": 0.25},
}
_BANDS: tuple[Band, ...] = ("green", "amber", "red")


def band_of(weighted_gap_rate: float | None, tool_failure_rate: float | None) -> Band | None:
    """The worse of the two rates' bands; None when neither is known."""
    levels: list[int] = []
    for name, rate in (("weighted_gap_rate", weighted_gap_rate), ("tool_failure_rate", tool_failure_rate)):
        if rate is None:
            continue
        t = THRESHOLDS[name]
        levels.append(2 if rate >= t["red"] else 1 if rate >= t["amber"] else 0)
    return _BANDS[max(levels)] if levels else None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Tokens(Record):
    """Token usage summed over segments (each API message counted once); segments whose share
    of a session's usage cannot be told apart (a multi-skill Codex session) are counted in
    ``segments_without_usage`` instead."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    segments_without_usage: int = 0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SkillHealth(Record):
    """The health of one skill (or ``(no skill)``, or ``overall``) over the observed segments."""

    skill: str
    segments: Count
    sessions: Count
    started_by: dict[str, int]
    first_seen: str | None
    last_seen: str | None
    tool_calls: Count
    tool_failures: Count
    cancelled: Count
    unresolved: Count
    tool_failure_rate: float | None
    failures_by_kind: dict[str, int]
    subagents: Count
    gaps: GapSummary
    coverage: Coverage | None = None
    tokens: Tokens
    cost_usd: float | None = None
    segments_without_cost: Count = 0
    confidence: Confidence
    band: Band | None
    band_indicative: bool


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TraceSet(Record):
    """Which traces the report read and what was passed over (``files``: session files read;
    ``bytes``: their size with their subagent transcripts'; ``skipped_files``: not read, with
    the reason; ``partly_read_files``: a run repeated or several runs in one file, with what was
    counted; ``bad_lines``: per file, the corrupt or truncated lines passed over;
    ``orphan_subagents``: subagent transcripts whose session file is absent, analysed as sessions
    of their own; ``files_without_segments``: files read that gave no segment — no agent turn, or
    none in the window or for ``--skills``)."""

    paths: list[str]
    files: int
    bytes: int
    sessions: int
    segments: int
    skipped_files: list[str]
    partly_read_files: list[str]
    bad_lines: list[str] = dataclasses.field(default_factory=list)
    orphan_subagents: list[str] = dataclasses.field(default_factory=list)
    files_without_segments: list[str] = dataclasses.field(default_factory=list)
    skipped_by_mtime: int
    undated_sessions: int
    window: dict[str, str | None]
    skills: list[str] | None
    kb: str | None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HealthReport(Record):
    """``knowmeter observe``'s report. Every gap rate and coverage figure in it carries the
    trace-set watermark (``paths``, ``count`` = segments, ``sha256``, the warning). The gap
    inventory (``gaps.signals``) is listed per skill; ``overall`` has the totals only."""

    omit_none: ClassVar[bool] = False  # the JSON output shows unknown figures as null

    schema_version: Literal[1] = 1
    watermark: Watermark
    trace_set: TraceSet
    thresholds: dict[str, dict[str, float]]
    overall: SkillHealth | None
    skills: list[SkillHealth]


def skill_health(
    t: SkillTotals, tasks: list[TaskGaps], watermark: Watermark, kb_files: Sequence[KnowledgeFile] | None
) -> SkillHealth:
    """One row of the report from a skill's running totals and its segments' gap analyses."""
    gaps = aggregate_gaps(tasks, watermark, variant=t.skill)
    judged = t.calls - t.cancelled - t.unresolved
    fail_rate = t.failures / judged if judged else None
    cov = coverage(kb_files, t.kb, watermark, variant=t.skill) if kb_files is not None else None
    tier = confidence_tier(t.segments)
    return SkillHealth(
        skill=t.skill,
        segments=t.segments,
        sessions=len(t.sessions),
        started_by=dict(sorted(t.started_by.items())),
        first_seen=t.first,
        last_seen=t.last,
        tool_calls=t.calls,
        tool_failures=t.failures,
        cancelled=t.cancelled,
        unresolved=t.unresolved,
        tool_failure_rate=fail_rate,
        failures_by_kind=dict(sorted(t.failure_kinds.items())),
        subagents=t.subagents,
        gaps=gaps,
        coverage=cov,
        tokens=Tokens(**{k: t.usage.get(k, 0) for k in USAGE_KEYS}, segments_without_usage=t.without_usage),
        cost_usd=t.cost_usd if t.with_cost else None,
        segments_without_cost=t.segments - t.with_cost,
        confidence=tier,
        band=band_of(gaps.weighted_gap_rate, fail_rate),
        band_indicative=tier == "underpowered",
    )


def build_report(
    m: Merger,
    *,
    paths: Sequence[str],
    window: dict[str, str | None],
    skills: Sequence[str] | None,
    kb: str | None,
    kb_files: Sequence[KnowledgeFile] | None,
) -> HealthReport:
    """The report of everything ``m`` merged."""
    wm = m.watermark(paths, skills)
    trace_set = TraceSet(
        paths=list(paths),
        files=m.files,
        bytes=m.bytes,
        sessions=m.sessions,
        segments=m.overall.segments,
        skipped_files=sorted(m.skipped),
        partly_read_files=sorted(m.notes),
        bad_lines=sorted(m.bad_lines),
        orphan_subagents=sorted(m.orphans),
        files_without_segments=sorted(m.empty),
        skipped_by_mtime=m.mtime_skips,
        undated_sessions=m.undated,
        window=window,
        skills=sorted(skills) if skills else None,
        kb=kb,
    )
    rows = m.rows()
    tasks = [[unpack_gaps(g) for g in t.gaps] for t in rows]
    overall = None
    if m.overall.segments:  # the same segments as the rows (in another order: the overall has no inventory)
        overall = skill_health(m.overall, [g for row in tasks for g in row], wm, kb_files)
        overall = dataclasses.replace(overall, gaps=dataclasses.replace(overall.gaps, signals=()))
    return HealthReport(
        watermark=wm,
        trace_set=trace_set,
        thresholds=THRESHOLDS,
        overall=overall,
        skills=[skill_health(t, g, wm, kb_files) for t, g in zip(rows, tasks, strict=True)],
    )
