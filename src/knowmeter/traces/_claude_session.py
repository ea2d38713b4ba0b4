"""Claude Code on-disk session transcripts (``~/.claude/projects/<project>/<session>.jsonl``) → Trace.

Built for scanning large folders: lines are read one at a time as bytes (``read_lines``), lines
whose record type is of no use (progress, file-history snapshots, API request dumps, attachments,
…) are skipped before decoding when the raw line already shows their type, the rest are decoded
with ``orjson`` (``loads_line``), and ``ClaudeSessionReader.events`` yields events as it goes, so
memory stays flat however long the file is.

Subagents: their transcripts are ``<session>/subagents/agent-<id>.jsonl``, but the main file also
carries each subagent message as a ``progress`` record (``data.type: "agent_progress"``,
``data.agentId``, ``data.message`` = the subagent's own record, ``parentToolUseID`` = the ``Task``
call). The reader keeps those (``progress_traces``) so a session whose subagent files are missing
still has its subagents' calls; ``load_claude_session`` uses them only for agents without a file
(and without sidechain lines in the main file), so nothing is counted twice.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowmeter.traces._claude_stream import ClaudeMessages
from knowmeter.traces._common import LineStats, SessionTrace, loads_line, read_lines
from knowmeter.traces._ir import Event, Trace

SOURCE = "claude-session-jsonl"

#: Record types the reader turns into events or meta; every other type is skipped.
_WANTED = frozenset({"user", "assistant", "system", "summary", "ai-title", "custom-title", "cost-state"})
_TYPE_KEY = b'"type":"'
_WANTED_BYTES = frozenset(t.encode() for t in _WANTED)
_EVENT_TYPE = re.compile(rb'"type":"(?:user|assistant|system)"')
_META_FIELDS = (
    ("sessionId", "session_id"),
    ("version", "agent_version"),
    ("cwd", "cwd"),
    ("gitBranch", "git_branch"),
    ("slug", "slug"),
)
_AGENT_PROGRESS = b'"agent_progress"'


@dataclass(slots=True)
class _ProgressAgent:
    """One subagent as its ``agent_progress`` records in the main file show it."""

    parent_call: str | None
    prompt: str | None
    started_at: str | None
    msgs: ClaudeMessages = field(default_factory=ClaudeMessages)
    events: list[Event] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


class ClaudeSessionReader:
    """Streaming parser for one session JSONL file.

    ``agent_id`` is set for a subagent file (every event carries it); ``compaction`` marks a
    compaction side-transcript (``agent-acompact-*``), whose text is all harness text.
    ``meta`` is complete once ``events`` is exhausted.
    """

    def __init__(self, *, agent_id: str | None = None, compaction: bool = False) -> None:
        self.agent_id = agent_id
        self.meta: dict[str, Any] = {"compaction": True} if compaction else {}
        self._msgs = ClaudeMessages(injected_all=compaction)
        self._stats = LineStats()
        self._seen_uuids: set[str] = set()
        self._repeated = 0
        self._skipped = 0
        self._progress: dict[str, _ProgressAgent] = {}
        self._sidechains: set[str] = set()  # agents whose lines are in this file itself

    def usage_so_far(self) -> dict[str, int | None]:
        """Token usage of the records read so far (deduplicated by message id)."""
        return self._msgs.usage()

    def events(self, lines: Iterable[str | bytes]) -> Iterator[Event]:
        """Yield the events of ``lines`` (text, or UTF-8 bytes as ``read_lines`` gives them: faster)
        in order; a record whose ``uuid`` was seen before is dropped and counted
        (``meta["repeated_records"]``)."""
        stats = self._stats
        record = self._record
        out: list[Event] = []
        for raw in lines:
            if len(raw) < 3 and not raw.strip():
                continue
            stats.lines += 1
            line = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
            if _skipped_type(line):
                if not line.endswith((b"}\n", b"}", b"}\r\n")):  # cut off mid-record: undecodable
                    stats.bad()
                elif _AGENT_PROGRESS in line:
                    try:
                        self._agent_progress(loads_line(line))
                    except ValueError:
                        stats.bad()
                else:
                    self._skipped += 1
                continue
            try:
                rec = loads_line(raw)
            except ValueError:
                stats.bad()
                continue
            if not isinstance(rec, dict):
                stats.bad()
                continue
            record(rec, out)
            if out:
                yield from out
                out.clear()
        self._finish()

    def _record(self, rec: dict[str, Any], out: list[Event]) -> None:
        """Add one record's events to ``out`` and its facts to ``meta``."""
        rtype = rec.get("type")
        if not isinstance(rtype, str) or rtype not in _WANTED:
            if rtype == "progress":  # a line the byte check could not place (e.g. spaced JSON)
                self._agent_progress(rec)
            else:
                self._skipped += 1
            return
        uuid = rec.get("uuid")
        if isinstance(uuid, str):
            if uuid in self._seen_uuids:
                self._repeated += 1
                return
            self._seen_uuids.add(uuid)
        meta = self.meta
        if "cwd" not in meta:
            for src, dst in _META_FIELDS:
                if rec.get(src) is not None:
                    meta.setdefault(dst, rec[src])
        ts = rec.get("timestamp")
        if isinstance(ts, str):
            meta.setdefault("started_at", ts)
            meta["ended_at"] = ts
        agent_id = self.agent_id
        if agent_id is None and rec.get("isSidechain"):
            agent_id = str(rec.get("agentId") or "sidechain")
            self._sidechains.add(agent_id)
        message = rec.get("message")
        if rtype == "assistant" and isinstance(message, dict):
            cwd = rec.get("cwd")  # the shell's directory now: a ``cd`` in an earlier call moves it
            self._msgs.assistant(
                message,
                out,
                agent_id,
                bool(rec.get("isApiErrorMessage")),
                cwd if isinstance(cwd, str) and cwd != meta.get("cwd") else None,
            )
        elif rtype == "user" and isinstance(message, dict):
            injected = bool(rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly"))
            self._msgs.user(message, out, agent_id, rec.get("toolUseResult"), injected)
        elif rtype == "system":
            text = rec.get("content")
            if rec.get("subtype") == "api_error":
                self._msgs.api_errors += 1
                text = text or json.dumps(rec.get("error"), ensure_ascii=False)
            if isinstance(text, str) and text.strip():
                out.append(self._msgs.harness_text("system", text, agent_id))
        elif rtype == "cost-state":
            cost = rec.get("totalCostUSD")
            if isinstance(cost, int | float):
                meta["cost_usd"] = float(cost)
        else:  # summary / ai-title / custom-title (and a user / assistant record without a message)
            title = rec.get("summary") or rec.get("aiTitle") or rec.get("customTitle")
            if isinstance(title, str):
                meta["title"] = title

    def _agent_progress(self, rec: Any) -> None:
        """Keep the subagent message an ``agent_progress`` record carries (see the module docstring)."""
        data = rec.get("data") if isinstance(rec, dict) else None
        if not isinstance(data, dict) or data.get("type") != "agent_progress":
            self._skipped += 1
            return
        inner, agent = data.get("message"), data.get("agentId")
        if not isinstance(agent, str) or not isinstance(inner, dict) or not isinstance(inner.get("message"), dict):
            self._skipped += 1
            return
        p = self._progress.get(agent)
        if p is None:
            parent, prompt = rec.get("parentToolUseID"), data.get("prompt")
            p = self._progress[agent] = _ProgressAgent(
                parent if isinstance(parent, str) else None,
                prompt if isinstance(prompt, str) else None,
                rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None,
            )
        uuid = inner.get("uuid")
        if isinstance(uuid, str):
            if uuid in p.seen:
                return
            p.seen.add(uuid)
        if inner.get("type") == "assistant":
            p.msgs.assistant(inner["message"], p.events, agent)
        elif inner.get("type") == "user":
            p.msgs.user(inner["message"], p.events, agent, inner.get("toolUseResult"))

    def progress_traces(self, have: Iterable[str] = ()) -> list[Trace]:
        """The subagents known only from ``agent_progress`` records (complete once ``events`` is
        exhausted): one trace each, except agents in ``have`` (their transcript files were read)
        and agents whose sidechain lines are in this file. ``meta`` has ``from_progress``, the
        ``Task`` call that spawned it (``parent_tool_use_id``), its prompt and its usage."""
        skip = {*have, *self._sidechains}
        out: list[Trace] = []
        for agent, p in self._progress.items():
            if agent in skip or not p.events:
                continue
            meta: dict[str, Any] = {
                "agent_id": agent,
                "from_progress": True,
                "parent_tool_use_id": p.parent_call,
                "prompt": p.prompt,
                "started_at": p.started_at,
                "usage": p.msgs.usage(),
                "model": p.msgs.model,
                "cwd": self.meta.get("cwd"),
            }
            out.append(Trace(events=p.events, source=SOURCE, meta=meta))
        return out

    def _finish(self) -> None:
        self._stats.write_meta(self.meta)
        self.meta.update(
            api_messages=self._msgs.api_messages,
            api_errors=self._msgs.api_errors,
            usage=self._msgs.usage(),
            model=self._msgs.model,
            skipped_records=self._skipped,
            repeated_records=self._repeated,
        )
        if self.agent_id is not None:
            self.meta["agent_id"] = self.agent_id


def _skipped_type(line: bytes) -> bool:
    """True when the raw line already shows a record type of no use, so it need not be decoded:
    a line that starts with another ``{"type":…}``, or one that has a ``"type":"…"`` but never
    ``"type":"user"`` / ``"assistant"`` / ``"system"``."""
    at = line.find(_TYPE_KEY)
    if at < 0:
        return False
    if at == 1 and line.startswith(b"{"):  # the record's own type comes first
        value = at + len(_TYPE_KEY)
        return line[value : line.find(b'"', value)] not in _WANTED_BYTES
    return _EVENT_TYPE.search(line, at) is None


def parse_claude_session(
    lines: Iterable[str | bytes], *, agent_id: str | None = None, compaction: bool = False
) -> Trace:
    """Parse one session JSONL stream (main transcript or one subagent file) into a Trace."""
    reader = ClaudeSessionReader(agent_id=agent_id, compaction=compaction)
    events = list(reader.events(lines))
    return Trace(events=events, source=SOURCE, meta=reader.meta)


def read_claude_session_file(path: Path) -> Trace:
    """Parse one session file; a file named ``agent-<id>.jsonl`` is read as subagent ``<id>``
    (``agent-acompact-*`` as a compaction transcript)."""
    return _read_file(path)[0]


def _read_file(path: Path) -> tuple[Trace, ClaudeSessionReader]:
    """``read_claude_session_file`` and the reader that read it (for its ``progress_traces``)."""
    agent_id, compaction = subagent_of(path)
    reader = ClaudeSessionReader(agent_id=agent_id, compaction=compaction)
    trace = Trace(events=list(reader.events(read_lines(path))), source=SOURCE, meta=reader.meta)
    trace.meta["path"] = str(path)
    side = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
    if agent_id is not None and side.is_file():
        with contextlib.suppress(OSError, ValueError):
            trace.meta["agent_meta"] = json.loads(side.read_text(encoding="utf-8"))
    return trace, reader


def load_claude_session(path: Path) -> SessionTrace:
    """A main session file with its subagent and compaction transcripts
    (``<session-id>/subagents/**/agent-*.jsonl``); a subagent whose file is missing comes from
    the main file's ``agent_progress`` records when it has them (``meta["from_progress"]``)."""
    main, reader = _read_file(path)
    sub_dir = path.with_suffix("") / "subagents"
    files = sorted(sub_dir.rglob("agent-*.jsonl")) if sub_dir.is_dir() else []
    subagents = [read_claude_session_file(p) for p in files]
    subagents += reader.progress_traces(have=[str(t.meta.get("agent_id")) for t in subagents])
    session_id = str(main.meta.get("session_id") or path.stem)
    return SessionTrace(session_id=session_id, path=path, main=main, subagents=subagents)


def iter_claude_sessions(root: Path) -> Iterator[SessionTrace]:
    """Every session under ``root``, one at a time (memory holds one session).

    ``root`` may be a Claude config dir (``~/.claude``, which has ``projects/``), a ``projects``
    folder, one project folder, or one session file. Session files are ``<project>/<uuid>.jsonl``;
    their subagent files are read with them, never as sessions of their own.
    """
    for path in claude_session_files(root):
        yield load_claude_session(path)


def claude_session_files(root: Path) -> Iterator[Path]:
    """The main session files under ``root`` (see ``iter_claude_sessions``), sorted per folder."""
    if root.is_file():
        yield root
        return
    if (root / "projects").is_dir():
        root = root / "projects"
    own = sorted(p for p in root.glob("*.jsonl") if p.is_file())
    yield from own
    if own:
        return
    for project in sorted(p for p in root.iterdir() if p.is_dir()):
        yield from sorted(p for p in project.glob("*.jsonl") if p.is_file())


def subagent_of(path: Path) -> tuple[str | None, bool]:
    """A Claude subagent transcript's agent: ``agent-<id>.jsonl`` → (id, is a compaction
    transcript); (None, False) for any other file."""
    name = path.name
    if not name.startswith("agent-") or not name.endswith(".jsonl"):
        return None, False
    agent_id = name[len("agent-") : -len(".jsonl")]
    return agent_id, agent_id.startswith("acompact")
