"""One session file → per-segment partial results (runs inside a worker process).

A Claude session JSONL file is streamed: events come from ``ClaudeSessionReader`` one record at
a time, and each segment is analysed and dropped as soon as it is finished, so memory holds about
two segments, never the session. Its subagent transcripts (``<session>/subagents/agent-*.jsonl``)
are read after it, one at a time, and folded into the segment that spawned them. Other formats
(Codex rollouts, Claude stream-json, Codex ``exec --json``) are loaded whole and then segmented.

What a worker sends back is small: per kept segment its counts, its gap analysis packed small
(``pack_gaps``), its token usage and the knowledge files it accessed — never events or traces.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from knowmeter.analysis import TaskGaps, analyze_task
from knowmeter.errors import InputError
from knowmeter.observe._files import is_orphan_subagent
from knowmeter.observe._results import (
    MTIME_SLACK,
    NO_SKILL,
    ScanConfig,
    SegmentResult,
    SessionResult,
    pack_gaps,
)
from knowmeter.observe._runs import ONE_RUN_FORMATS, load_first_run
from knowmeter.observe._segment import Links, Segment, Segmenter, segment_events
from knowmeter.observe._window import parse_timestamp
from knowmeter.traces import (
    USAGE_KEYS,
    ClaudeSessionReader,
    ErrorKind,
    Event,
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolStatus,
    Trace,
    TraceFormat,
    Usage,
    load_trace,
    parse_claude_session,
    read_lines,
    sniff,
    subagent_of,
)

_GIVEN_CAP = 200_000  # chars of the person's own messages kept as "given" paths for the analysis


def file_stamp(path: Path, st: os.stat_result | None = None) -> str:
    """``size:mtime_ns`` — changes whenever the file is rewritten or appended to."""
    st = st or path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def subagent_files(path: Path) -> list[Path]:
    """A Claude session file's subagent / compaction transcripts (``<session>/subagents/**/agent-*.jsonl``)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(path.with_suffix("") / "subagents"):  # what rglob finds, faster
        found.extend(Path(folder, n) for n in (*dirs, *files) if n.startswith("agent-") and n.endswith(".jsonl"))
    return sorted(found)


def _usage_so_far(reader: ClaudeSessionReader) -> Usage:
    return reader.usage_so_far()


class _Session:
    """Scanning state of one session file."""

    def __init__(self, path: Path, key: str, cfg: ScanConfig) -> None:
        self.path, self.key, self.cfg = path, key, cfg
        self.stem = path.stem
        self.bad_lines: list[str] = []
        self.cwd: str | None = None
        self.started: datetime | None = None
        self.started_text: str | None = None  # as the trace wrote it
        self.given: list[str] = []
        self._given_chars = 0
        self.results: dict[int, SegmentResult] = {}
        self.gaps: dict[str, TaskGaps] = {}
        self.undated = False
        self.segments_seen = 0  # kept segments of the whole session, in the window or not

    def note_bad_lines(self, path: Path, meta: dict[str, Any]) -> None:
        """One line for a file whose reader passed over corrupt or truncated lines (counted)."""
        bad = meta.get("bad_lines")
        if isinstance(bad, int) and bad > 0:
            last = " (the last one truncated)" if meta.get("truncated_last_line") else ""
            self.bad_lines.append(f"{path}: {bad} corrupt or truncated line(s) passed over{last}")

    # -- segments ---------------------------------------------------------------------------
    def start(self, text: object) -> None:
        """The session's start, from the trace."""
        self.started = parse_timestamp(text)
        self.started_text = text if self.started is not None and isinstance(text, str) else None

    def wanted(self, seg: Segment) -> bool:
        if not self.cfg.wants_skill(seg.skill):
            return False
        when = parse_timestamp(seg.started_at) or self.started
        if when is None and self.cfg.window.bounded:
            self.undated = True
        return self.cfg.window.contains(when)

    def take(self, seg: Segment) -> None:
        """Analyse a finished segment (when the filters want it) and keep its result."""
        self.segments_seen += 1
        if not self.wanted(seg):
            return
        res = SegmentResult(
            sample_id=f"{self.stem}#{seg.index}",
            skill=seg.skill or NO_SKILL,
            marker=seg.marker,
            started_at=seg.started_at or self.started_text,
            usage=seg.usage,
        )
        trace = Trace(events=seg.events, source="observe-segment", meta={"cwd": self.cwd} if self.cwd else {})
        self._fold(res, trace, "\n".join(self.given))
        self.results[seg.index] = res

    def note_given(self, event: Event) -> None:
        """Remember what the person typed (it is "given", not constructed by the agent)."""
        if (
            isinstance(event, MessageEvent)
            and event.role == "user"
            and event.agent_id is None
            and (not event.injected or "<command-args>" in event.text)
            and self._given_chars < _GIVEN_CAP
        ):
            self.given.append(event.text[:_GIVEN_CAP])
            self._given_chars += len(event.text)

    def _fold(self, res: SegmentResult, trace: Trace, prompt: str) -> None:
        """Add one trace's tool counts, gap signals and kb accesses to a segment result."""
        _count_tools(res, trace.events)
        gaps = analyze_task(
            trace,
            sample_id=res.sample_id,
            prompt_text=prompt,
            workspace_root=self.cwd,
            count_retried_commands=self.cfg.count_retried_commands,
        )
        before = self.gaps.get(res.sample_id)
        self.gaps[res.sample_id] = gaps if before is None else _merge_gaps(before, gaps)
        if self.cfg.kb is not None:
            from knowmeter.analysis import accessed_files  # its module loads the coverage models

            for k, n in self.cfg.kb.map_accesses(accessed_files(trace, None, cwd=self.cwd)).items():
                res.kb_access[k] = res.kb_access.get(k, 0) + n

    def attribute_cost(self, cost: object) -> None:
        """Give the session's reported cost to its segment when the session is that one segment:
        a session's cost cannot be split between skills (it stays unknown for each of them)."""
        if (
            isinstance(cost, int | float)
            and not isinstance(cost, bool)
            and cost == cost
            and self.segments_seen == 1
            and len(self.results) == 1
        ):
            next(iter(self.results.values())).cost_usd = float(cost)

    def finished(self) -> list[SegmentResult]:
        """The kept segments in order, their gap analyses packed (the parent holds one
        per segment until the end: a few hundred bytes each)."""
        out = [self.results[i] for i in sorted(self.results)]
        for res in out:
            res.gaps = pack_gaps(self.gaps[res.sample_id])
        return out

    # -- subagents --------------------------------------------------------------------------
    def add_subagent(self, path: Path, links: Links) -> str | None:
        """Fold one subagent transcript into the segment that spawned it; its stamp when it counted."""
        agent, compaction = subagent_of(path)
        index = links.agents.get(agent) if agent is not None else None
        if index is not None and index not in self.results:
            return None  # spawned by a segment the filters left out: not even read
        trace = parse_claude_session(read_lines(path), agent_id=agent, compaction=compaction)
        self.note_bad_lines(path, trace.meta)
        return file_stamp(path) if self.join_subagent(trace, agent, links, index) else None

    def join_subagent(self, trace: Trace, agent: str | None, links: Links, index: int | None = None) -> bool:
        """Fold one subagent's trace into the segment ``index`` (else the one ``links`` finds for
        it); False when that segment is not kept."""
        first = next((e.text for e in trace.events if isinstance(e, MessageEvent) and e.role == "user"), None)
        prompt = first or trace.meta.get("prompt")
        if index is None:
            index = links.segment_of(agent, prompt if isinstance(prompt, str) else None, trace.meta.get("started_at"))
        res = self.results.get(index) if index is not None else None
        if res is None:
            return False
        trace.meta.setdefault("cwd", self.cwd)
        self._fold(res, trace, prompt if isinstance(prompt, str) else "")
        res.subagents += 1
        res.usage = _add_usage(res.usage, trace.meta.get("usage"))
        return True


def _count_tools(res: SegmentResult, events: list[Event]) -> None:
    status: dict[str, ToolResultEvent] = {e.id: e for e in events if isinstance(e, ToolResultEvent)}
    for e in events:
        if not isinstance(e, ToolCallEvent):
            continue
        res.tool_calls += 1
        r = status.get(e.id)
        if r is None or r.status is ToolStatus.UNKNOWN:
            res.unresolved += 1
        elif r.status is ToolStatus.CANCELLED:
            res.cancelled += 1
        elif r.status is ToolStatus.FAILURE and r.error_kind is not ErrorKind.EMPTY_SEARCH:
            res.failures += 1
            kind = r.error_kind.value if r.error_kind is not None else "other"
            res.failure_kinds[kind] = res.failure_kinds.get(kind, 0) + 1


def _merge_gaps(old: TaskGaps, new: TaskGaps) -> TaskGaps:
    """One segment's gap analysis from its main part and each subagent's (analysed apart: the
    signals are per agent anyway, and turn numbers restart in every transcript)."""
    excluded = dict(old.excluded)
    for k, v in new.excluded.items():
        excluded[k] = excluded.get(k, 0) + v
    return replace(
        old,
        signals=(*old.signals, *new.signals),
        excluded=excluded,
        retried=(*old.retried, *new.retried),
        hedging_unjudged=old.hedging_unjudged + new.hedging_unjudged,
    )


def _add_usage(total: Usage | None, part: Any) -> Usage | None:
    if total is None or not isinstance(part, dict):
        return total
    out = dict(total)
    for k in USAGE_KEYS:
        v = part.get(k)
        if isinstance(v, int):
            out[k] = (out.get(k) or 0) + v
    return out


def _mtime_skip(path: Path, cfg: ScanConfig, size_mtime: os.stat_result) -> bool:
    since = cfg.window.since
    if since is None:
        return False
    latest = max([size_mtime.st_mtime, *(p.stat().st_mtime for p in subagent_files(path))])
    return datetime.fromtimestamp(latest, since.tzinfo) < since - MTIME_SLACK


def scan_session(path: Path, key: str, cfg: ScanConfig) -> SessionResult:
    """Scan one session file (see the module docstring). A file that is not an agent trace or
    cannot be read is reported as ``skipped`` with the reason, never raised."""
    try:
        return _scan(path, key, cfg)
    except InputError as exc:
        return SessionResult(key, "skipped", error=str(exc))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return SessionResult(key, "skipped", error=f"{path}: cannot read ({reason}); check its permissions")
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        # a damaged or hostile file (nesting too deep, a value of the wrong type, NaN where a count
        # belongs): skipped and counted, so one bad file never aborts the folder
        detail = (str(exc).splitlines() or [""])[0][:120]
        return SessionResult(
            key, "skipped", error=f"{path}: not a readable agent trace ({type(exc).__name__}: {detail}); skipped"
        )


def _scan(path: Path, key: str, cfg: ScanConfig) -> SessionResult:
    st = path.stat()
    if _mtime_skip(path, cfg, st):
        return SessionResult(key, "skipped_mtime", size=st.st_size)
    fmt = sniff(path)
    session = _Session(path, key, cfg)
    stamps = [file_stamp(path, st)]
    size = st.st_size
    note: str | None = None
    if fmt is TraceFormat.CLAUDE_SESSION:
        reader, links = _scan_claude(session)
        note = _repeat_note(path, reader.meta.get("repeated_records"))
        files = subagent_files(path) if session.results else []
        for sub in files:
            size += sub.stat().st_size
            stamp = session.add_subagent(sub, links)
            if stamp is not None:
                stamps.append(f"{sub.relative_to(path.parent).as_posix()}:{stamp}")
        # subagents whose files are missing: what the main file's ``agent_progress`` records show
        have = [a for a, _ in map(subagent_of, files) if a]
        for trace in reader.progress_traces(have=have) if session.results else []:
            parent = trace.meta.get("parent_tool_use_id")
            session.join_subagent(
                trace,
                trace.meta.get("agent_id"),
                links,
                links.task_calls.get(parent) if isinstance(parent, str) else None,
            )
    else:
        note = _scan_loaded(session, fmt)
    kept = session.finished()
    bad, orphan = session.bad_lines, is_orphan_subagent(key)
    if not kept:
        return SessionResult(key, "no_segments", size=size, undated=session.undated, note=note, bad_lines=bad)
    fp = hashlib.sha256("\n".join([*stamps, *(r.sample_id for r in kept)]).encode()).hexdigest()
    return SessionResult(
        key,
        "ok",
        size=size,
        fingerprint=fp,
        undated=session.undated,
        segments=kept,
        note=note,
        bad_lines=bad,
        orphan=orphan,
    )


def _repeat_note(path: Path, repeated: object) -> str | None:
    """A session file's note when records in it repeat earlier ones (the reader counts each once)."""
    if not isinstance(repeated, int) or repeated <= 0:
        return None
    return (
        f"{path}: repeats itself ({repeated} record(s) with the uuid of an earlier one: counted once) — "
        "if the file was written twice, keep one copy"
    )


def _scan_claude(session: _Session) -> tuple[ClaudeSessionReader, Links]:
    agent, compaction = subagent_of(session.path)
    reader = ClaudeSessionReader(agent_id=agent, compaction=compaction)
    segmenter = Segmenter(usage_probe=lambda: _usage_so_far(reader))
    meta = reader.meta
    first = True
    for event in reader.events(read_lines(session.path)):
        if first:  # the reader has read the session's first record: its cwd and start are known
            session.cwd = meta.get("cwd")
            session.start(meta.get("started_at"))
            first = False
        session.note_given(event)
        for seg in segmenter.feed(event, meta.get("ended_at")):
            session.take(seg)
    for seg in segmenter.finish():
        session.take(seg)
    session.attribute_cost(meta.get("cost_usd"))  # a ``cost-state`` record's session total
    session.note_bad_lines(session.path, meta)
    return reader, segmenter.links


def _scan_loaded(session: _Session, fmt: TraceFormat) -> str | None:
    """Segment a trace loaded whole; the note ``load_first_run`` gives when only part of the file
    was read."""
    trace, note = load_first_run(session.path, fmt) if fmt in ONE_RUN_FORMATS else (load_trace(session.path), None)
    session.cwd = trace.meta.get("cwd") if isinstance(trace.meta.get("cwd"), str) else None
    session.note_bad_lines(session.path, trace.meta)
    started = trace.meta.get("started_at")
    session.start(started)
    for e in trace.events:
        session.note_given(e)
    segments, _ = segment_events(trace.events, started if isinstance(started, str) else None)
    if len(segments) == 1 and isinstance(trace.meta.get("usage"), dict):
        segments[0].usage = dict(trace.meta["usage"])
    for seg in segments:
        session.take(seg)
    session.attribute_cost(trace.meta.get("cost_usd"))  # Claude stream-json ``total_cost_usd``; Codex: none
    return note


def scan_sessions(cfg: ScanConfig, jobs: list[tuple[Path, str]]) -> list[SessionResult]:
    """``scan_session`` over ``jobs`` (``(path, key)`` pairs), in order: one worker's chunk."""
    return [scan_session(path, key, cfg) for path, key in jobs]
