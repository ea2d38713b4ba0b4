"""Splitting one session's main trace into skill segments, one event at a time.

A segment starts at a skill-start marker (see ``_markers``). A skill runs for the request it was
started in: its segment ends at the next skill start, at the next message the person types (a
user message that is not harness text, tool output or a slash-command echo — in Claude Code the
person can only type once the agent's turn is over), or at the session end. What follows a
skill's end until the next start is a "no skill" segment, like the events before the first
marker (segment 0); a no-skill segment is kept only when the agent did something in it (a tool
call or its own words), and it does not end at the person's messages (consecutive requests
without a skill stay one segment). A marker for the skill that
is already running, before the agent has done anything in that segment, is the same invocation
(``/x`` echoed and then ``Skill(x)`` called, or ``Skill(x)`` followed by its ``<command-name>``
echo) and does not open a new segment; neither does re-reading the running skill's ``SKILL.md``.

Markers count only from the transcript's own agent: the agent of its first event (the main
agent of a session file; the subagent of a sidechain file read on its own). Other agents'
events — subagent lines inside a main transcript, ``parent_tool_use_id`` events in stream-json —
stay in the segment that is running.

A tool result is kept with its call: the previous segment stays open for the results of calls
it made until the segment after the next one starts. The segmenter also records what links a
subagent transcript to the segment that spawned it: ``Task`` calls (their prompt and the
``agentId: …`` their result reports) and the segments' start times.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from knowmeter.observe._markers import Marker, skill_start
from knowmeter.traces import Event, MessageEvent, ToolCallEvent, ToolResultEvent, Usage

_AGENT_ID = re.compile(r"\bagentId:\s*([\w-]+)")
_UNSET = "\0unset"


@dataclass(slots=True)
class Segment:
    """One stretch of a session under one skill (``skill`` None: before any skill started).

    ``started_at`` is the timestamp of the record that started it (for segment 0, of its first
    event), when the trace has timestamps. ``usage`` is the token usage of its API messages
    when the trace lets it be told apart from other segments' (else None). ``active``: the
    agent called a tool or said something in it."""

    index: int
    skill: str | None
    marker: Marker | None
    started_at: str | None
    events: list[Event] = field(default_factory=list)
    usage: Usage | None = None
    active: bool = False
    calls: set[str] = field(default_factory=set)
    usage_start: Usage | None = None

    @property
    def kept(self) -> bool:
        """A skill segment always counts; the no-skill prelude only when the agent acted in it."""
        return self.skill is not None or self.active


def prompt_key(prompt: str | None) -> str:
    """A prompt normalised for matching a subagent's first message to its ``Task`` call."""
    return " ".join(prompt.split())[:500] if prompt else ""


@dataclass(slots=True)
class Links:
    """What ties subagent transcripts to segments: ``Task`` prompts, reported agent ids, start times."""

    prompts: dict[str, int] = field(default_factory=dict)
    agents: dict[str, int] = field(default_factory=dict)
    starts: list[tuple[str | None, int]] = field(default_factory=list)
    task_calls: dict[str, int] = field(default_factory=dict)

    def segment_of(self, agent_id: str | None, prompt: str | None, started_at: str | None) -> int | None:
        """The segment a subagent belongs to: the one whose ``Task`` result reported its agent id,
        else whose ``Task`` call had its prompt, else the one running when it started (the first
        segment when its start is unknown); None when the session has no segment."""
        if agent_id is not None and agent_id in self.agents:
            return self.agents[agent_id]
        key = prompt_key(prompt)
        if key and key in self.prompts:
            return self.prompts[key]
        if not self.starts:
            return None
        chosen = self.starts[0][1]
        if started_at is not None:
            for ts, index in self.starts:
                if ts is not None and ts <= started_at:
                    chosen = index
        return chosen


class Segmenter:
    """Feeds on a main trace's events and hands back finished segments (only kept ones).

    ``usage_probe`` (optional) returns the session's token usage so far; a segment's usage is
    the difference between its start and the next segment's start."""

    def __init__(self, usage_probe: Callable[[], Usage] | None = None) -> None:
        self.links = Links()
        self._probe = usage_probe
        self._own: str | None = _UNSET
        self._current: Segment | None = None
        self._previous: Segment | None = None
        self._next_index = 1

    def feed(self, event: Event, timestamp: str | None = None) -> list[Segment]:
        """Add one event; returns the segments this event finished (at most one)."""
        if self._own == _UNSET:
            self._own = event.agent_id
        own = event.agent_id == self._own
        done: list[Segment] = []
        start = skill_start(event) if own else None
        cur = self._current
        if start is not None and not _continues(cur, *start):
            done = self._open(start[0], start[1], timestamp)
            cur = self._current
        elif own and cur is not None and cur.skill is not None and _typed_by_person(event):
            done = self._open(None, None, timestamp)  # the skill's request is over
            cur = self._current
        elif cur is None:
            cur = self._current = self._new(0, None, None, timestamp)
        assert cur is not None
        prev = self._previous
        target = prev if isinstance(event, ToolResultEvent) and prev is not None and event.id in prev.calls else cur
        target.events.append(event)
        self._note(event, target, own, marker=start is not None)
        return done

    def finish(self) -> list[Segment]:
        """The segments still open at the end of the trace, in order."""
        self._close_usage(self._current)
        out = [s for s in (self._previous, self._current) if s is not None]
        self._previous = self._current = None
        return self._kept(out)

    def _open(self, skill: str | None, marker: Marker | None, timestamp: str | None) -> list[Segment]:
        done = [self._previous] if self._previous is not None else []
        self._close_usage(self._current)
        self._previous = self._current
        self._current = self._new(self._next_index, skill, marker, timestamp)
        self._next_index += 1
        return self._kept(done)

    def _kept(self, segments: list[Segment]) -> list[Segment]:
        dropped = {s.index for s in segments if not s.kept}
        if dropped:
            self.links.starts = [(ts, i) for ts, i in self.links.starts if i not in dropped]
        return [s for s in segments if s.kept]

    def _new(self, index: int, skill: str | None, marker: Marker | None, timestamp: str | None) -> Segment:
        seg = Segment(index, skill, marker, timestamp)
        if self._probe is not None:
            seg.usage_start = self._probe()
        self.links.starts.append((timestamp, index))
        return seg

    def _close_usage(self, seg: Segment | None) -> None:
        if seg is None or self._probe is None or seg.usage_start is None:
            return
        now, then = self._probe(), seg.usage_start
        seg.usage = {k: None if v is None else v - (then.get(k) or 0) for k, v in now.items()}

    def _note(self, event: Event, seg: Segment, own: bool, *, marker: bool) -> None:
        """Book-keeping for one event; a marker itself is not activity (its echo may follow)."""
        if isinstance(event, ToolCallEvent):
            seg.active = seg.active or not marker
            seg.calls.add(event.id)
            if event.tool == "Task" and own:
                self.links.task_calls[event.id] = seg.index
                prompt = event.input.get("prompt")
                key = prompt_key(prompt if isinstance(prompt, str) else None)
                if key:
                    self.links.prompts.setdefault(key, seg.index)
        elif isinstance(event, ToolResultEvent):
            index = self.links.task_calls.get(event.id)
            if index is not None:
                for agent in _AGENT_ID.findall(event.output[-2000:]):
                    self.links.agents.setdefault(agent, index)
        elif isinstance(event, MessageEvent) and event.role == "assistant" and not event.injected:
            seg.active = True


def _typed_by_person(event: Event) -> bool:
    """A message the person typed (harness text, reminders and command echoes are injected)."""
    return isinstance(event, MessageEvent) and event.role == "user" and not event.injected


def _continues(cur: Segment | None, skill: str, marker: Marker) -> bool:
    """True when a marker for ``skill`` is part of the running segment rather than a new one."""
    if cur is None or cur.skill != skill:
        return False
    return marker == "skill_md_read" or not cur.active


def segment_events(events: Iterable[Event], timestamp: str | None = None) -> tuple[list[Segment], Links]:
    """All kept segments of a whole (already loaded) main trace, in order, with its links.
    ``timestamp`` is used as every segment's start (loaded traces carry no per-event times)."""
    seg = Segmenter()
    out: list[Segment] = []
    for e in events:
        out.extend(seg.feed(e, timestamp))
    out.extend(seg.finish())
    return out, seg.links
