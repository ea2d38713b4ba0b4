"""What a worker sends back and what it is told: small, plain, picklable records.

A worker returns one ``SessionResult`` per session file: per kept segment its counts, its gap
analysis packed small (``pack_gaps``), its token usage and the knowledge files it
accessed — never events or traces. This module imports nothing heavy, so the parent process stays
small until the merge is done.
"""

from __future__ import annotations

import pickle
import zlib
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Literal

from knowmeter.observe._kb import KbIndex
from knowmeter.observe._window import TimeWindow
from knowmeter.traces import Usage

if TYPE_CHECKING:
    from knowmeter.analysis import TaskGaps

#: The label of segment 0 (events before any skill started) in reports.
NO_SKILL = "(no skill)"
#: A file is skipped unread only when its mtime is this much before ``--since`` (clock skew
#: between the recording machine and this file system, copies that kept their mtime).
MTIME_SLACK = timedelta(days=1)

Status = Literal["ok", "no_segments", "skipped_mtime", "skipped"]


@dataclass(frozen=True, slots=True)
class ScanConfig:
    """What every worker needs: the window, the skill filter, the kb index, and whether retried
    commands count as gap signals."""

    window: TimeWindow = field(default_factory=TimeWindow)
    skills: frozenset[str] | None = None
    kb: KbIndex | None = None
    count_retried_commands: bool = False

    def wants_skill(self, skill: str | None) -> bool:
        """Without ``--skills`` every segment counts (no-skill ones too); with it, only those skills."""
        return self.skills is None or (skill is not None and skill in self.skills)


@dataclass(slots=True)
class SegmentResult:
    """One kept segment, reduced to what the report needs; ``gaps`` is its ``TaskGaps``,
    pickled and zlib-compressed (``pack_gaps`` / ``unpack_gaps``)."""

    sample_id: str
    skill: str
    marker: str | None
    started_at: str | None
    tool_calls: int = 0
    failures: int = 0
    cancelled: int = 0
    unresolved: int = 0
    failure_kinds: dict[str, int] = field(default_factory=dict)
    usage: Usage | None = None
    cost_usd: float | None = None
    subagents: int = 0
    gaps: bytes = b""
    kb_access: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class SessionResult:
    """What one session file contributed. ``fingerprint`` (sha256 over its files' size and mtime
    and the ids of its kept segments) names its part of the trace set; None when nothing was kept."""

    key: str
    status: Status
    size: int = 0
    fingerprint: str | None = None
    undated: bool = False
    segments: list[SegmentResult] = field(default_factory=list)
    error: str | None = None
    note: str | None = None  # the file was read in part: what was left out and why (``_runs``)
    bad_lines: list[str] = field(default_factory=list)  # per file with corrupt / truncated lines: a line
    orphan: bool = False  # a subagent transcript whose session file is absent, read as a session


def pack_gaps(gaps: TaskGaps) -> bytes:
    """A segment's gap analysis as the parent keeps it until the report: pickled (it only ever
    travels between this program's own processes) and compressed, a few hundred bytes."""
    return zlib.compress(pickle.dumps(gaps, protocol=pickle.HIGHEST_PROTOCOL), 1)


def unpack_gaps(packed: bytes) -> TaskGaps:
    """The ``TaskGaps`` that ``pack_gaps`` packed."""
    gaps: TaskGaps = pickle.loads(zlib.decompress(packed))
    return gaps
