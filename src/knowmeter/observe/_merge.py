"""Merging the workers' ``SessionResult``s, in any order, into per-skill running totals.

The totals are plain Python (counters, the segments' gap dicts, their kb accesses), so the parent
stays small while results stream in; the report models are built once, at the end."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from knowmeter.observe._results import NO_SKILL, SegmentResult, SessionResult
from knowmeter.traces import USAGE_KEYS
from knowmeter.watermark import Watermark


@dataclass(slots=True)
class SkillTotals:
    """Running totals of one skill (or of all segments: ``overall``)."""

    skill: str
    segments: int = 0
    sessions: set[str] = field(default_factory=set)
    started_by: Counter[str] = field(default_factory=Counter)
    first: str | None = None
    last: str | None = None
    calls: int = 0
    failures: int = 0
    cancelled: int = 0
    unresolved: int = 0
    failure_kinds: Counter[str] = field(default_factory=Counter)
    subagents: int = 0
    usage: Counter[str] = field(default_factory=Counter)
    without_usage: int = 0
    cost_usd: float = 0.0
    with_cost: int = 0
    gaps: list[bytes] = field(default_factory=list)
    kb: list[dict[str, int]] = field(default_factory=list)

    def add(self, session: str, seg: SegmentResult) -> None:
        self.segments += 1
        self.sessions.add(session)
        self.started_by[seg.marker or "none"] += 1
        if seg.started_at is not None:
            self.first = min(self.first or seg.started_at, seg.started_at)
            self.last = max(self.last or seg.started_at, seg.started_at)
        self.calls += seg.tool_calls
        self.failures += seg.failures
        self.cancelled += seg.cancelled
        self.unresolved += seg.unresolved
        self.failure_kinds.update(seg.failure_kinds)
        self.subagents += seg.subagents
        if seg.usage is None:
            self.without_usage += 1
        else:
            self.usage.update({k: v for k, v in seg.usage.items() if k in USAGE_KEYS and v})
        if seg.cost_usd is not None:
            self.cost_usd += seg.cost_usd
            self.with_cost += 1
        self.gaps.append(seg.gaps)
        if seg.kb_access:
            self.kb.append(seg.kb_access)


class Merger:
    """Folds ``SessionResult``s (in any order: the report does not depend on it) into the totals
    ``observe._report.build_report`` makes the report of."""

    def __init__(self) -> None:
        self.skills: dict[str, SkillTotals] = {}
        self.overall = SkillTotals("overall")
        self._fingerprints: list[tuple[str, str]] = []
        self.files = self.bytes = self.sessions = self.mtime_skips = self.undated = 0
        self.skipped: list[str] = []
        self.notes: list[str] = []
        self.bad_lines: list[str] = []
        self.orphans: list[str] = []
        self.empty: list[str] = []

    def add(self, res: SessionResult) -> None:
        if res.note is not None:
            self.notes.append(res.note)
        self.bad_lines.extend(res.bad_lines)
        if res.orphan and res.status == "ok":
            self.orphans.append(res.key)
        if res.status == "skipped":
            self.skipped.append(res.error or res.key)
            return
        if res.status == "skipped_mtime":
            self.mtime_skips += 1
            return
        self.files += 1
        self.bytes += res.size
        self.undated += res.undated
        if res.fingerprint is None:
            if res.status == "no_segments":
                self.empty.append(res.key)
            return
        self.sessions += 1
        self._fingerprints.append((res.key, res.fingerprint))
        for seg in res.segments:
            self.skills.setdefault(seg.skill, SkillTotals(seg.skill)).add(res.key, seg)
            self.overall.add(res.key, seg)

    def watermark(self, paths: Sequence[str], skills: Sequence[str] | None) -> Watermark:
        """The trace set's watermark: the paths given, the segment count, and a sha256 over every
        counted session's (path, fingerprint) pair (and the ``--skills`` filter) — it changes when
        a trace file is written, or the sessions in the window or the segments kept change."""
        h = hashlib.sha256()
        for key, fp in sorted(self._fingerprints):
            h.update(f"{key}\t{fp}\n".encode())
        if skills:
            h.update(("skills=" + ",".join(sorted(skills))).encode())
        return Watermark(tuple(paths), self.overall.segments, h.hexdigest())

    def rows(self) -> list[SkillTotals]:
        """Skills by segment count (most first), ``(no skill)`` last."""
        return sorted(self.skills.values(), key=lambda a: (a.skill == NO_SKILL, -a.segments, a.skill))
