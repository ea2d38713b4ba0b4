"""``knowmeter observe``: skill health from real Claude Code / Codex usage traces.

Typical use::

    report = observe(["~/.claude/projects/-home-me-app"], window=make_window(last="7d"), kb="docs/kb")
    render_health(report, Console())        # or report.to_dict() for JSON

How the traces are read (each rule is documented in the module that applies it):

- **Segments** (``_segment``, ``_markers``): a session is cut at every skill start — a ``Skill``
  tool call, a typed ``/x`` slash command (``<command-name>``; Claude Code's own UI commands such
  as ``/clear`` excluded), or a read of ``…/.claude/skills/<x>/SKILL.md``. A skill runs for the
  request it was started in: its segment ends at the next start, at the next message the person
  types, or at the session end. Events outside every skill (before the first start, after a
  skill's request) are reported as the ``(no skill)`` row when the agent did anything there (left
  out under ``--skills``). Subagent
  transcripts join the segment whose ``Task`` call spawned them (by the ``agentId`` its result
  reports, else its prompt, else the segment running when the subagent started). A subagent whose
  ``subagents/agent-<id>.jsonl`` is missing is read from the main file's ``agent_progress``
  records instead (joined through their ``Task`` call), never both.
- **No file lost in silence** (``_files``, ``_scan``): a path given that is empty, foreign or
  unreadable is one skipped line (an error only when nothing at all was read); a
  ``<session>/subagents`` folder whose session file is absent is read as sessions of its own and
  listed (``trace_set.orphan_subagents``); corrupt or truncated lines are passed over and counted
  per file (``trace_set.bad_lines``).
- **Retried commands** (the same non-search command failing in 3+ turns) are listed apart and
  stay out of the gap rates unless ``count_retried_commands`` (``--count-retried-commands``).
- **One run per file** (``_runs``): a stream-json / Codex exec file holding a run twice is
  counted once, one holding several runs counts the first; the report lists such files (and
  session files whose records repeat: counted once) under ``trace_set.partly_read_files``.
- **One sample = one segment.** Gap signals come from ``analysis.analyze_task`` on the segment's
  events (each subagent analysed on its own and merged in: signals are per agent anyway); what the
  person typed earlier in the session counts as given, not as a path the agent made up.
- **Tool failure rate** = failures / calls with a verdict: cancelled parallel siblings and calls
  that never got a result are left out of the denominator; an empty search is a gap signal, not a
  tool failure.
- **Tokens**: Claude session usage deduplicated by message id (the adapter's rule); an API call
  belongs to the segment running when it was made (the call that invokes a skill is made before
  the skill runs); subagents' usage joins their segment. Formats that only report a session total
  (Codex) give it to a single-segment session, else count ``segments_without_usage``. Token
  counts mean the same for every source (``knowmeter.traces.USAGE_KEYS``: input excludes cache).
- **Cost**: what the agent reported (stream-json ``total_cost_usd``, ``cost-state`` records), given
  to a session's segment only when the session is that one segment; otherwise unknown
  (``segments_without_cost``), never 0.
- **Coverage** (``--kb DIR``, see ``_kb``): a trace path reads a knowledge file when it ends with
  ``<DIR name>/<path inside DIR>``, wherever the session ran.
- **Window** (``_window``): a segment counts when it *started* in ``[since, until)`` (UTC); a file
  is skipped unread only when its mtime is a day or more before ``since``; sessions without any
  timestamp are left out of a bounded window (and counted).
- **Watermark**: paths given, segment count, sha256 over every counted session's path relative to
  the folder given, the size and mtime (ns) of its files (main + subagents) and its kept segment
  ids, plus the ``--skills`` filter: it changes whenever a trace file is written, a session enters
  or leaves the window or a segment is filtered, costs no extra read (hashing the bytes cost ~5 %
  of a scan), and a copy of the traces that does not keep mtimes gets a new id — which errs on the
  safe side. The spec's warning comes with it, on every gap rate and coverage figure.
- **Confidence** by segment count (< 5 underpowered, < 20 low, else high); the **health band** is
  the worse of the weighted gap rate band and the tool failure rate band (``THRESHOLDS``),
  shown as indicative when underpowered.
- **Performance**: with ``--workers N`` this process and N-1 worker processes
  (``ProcessPoolExecutor``; where processes fork, after the scanner is loaded, so they share it)
  take whole session files, biggest first, and stream them as bytes (``orjson``); workers send
  back per-segment counts, never traces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knowmeter.observe._markers import BUILTIN_COMMANDS, Marker, skill_of_path, skill_start
from knowmeter.observe._render import notes, render_health, top_gaps
from knowmeter.observe._results import NO_SKILL
from knowmeter.observe._run import default_workers, observe
from knowmeter.observe._segment import Links, Segment, Segmenter, segment_events
from knowmeter.observe._window import TimeWindow, make_window, parse_duration, parse_instant, parse_timestamp

if TYPE_CHECKING:
    from knowmeter.observe._report import THRESHOLDS, HealthReport, SkillHealth, Tokens, TraceSet, band_of

#: Names whose module loads the analysis aggregates and coverage: loaded on first use, so the
#: parent process is still small when it forks its workers.
_LAZY = frozenset({"THRESHOLDS", "HealthReport", "SkillHealth", "Tokens", "TraceSet", "band_of"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from knowmeter.observe import _report

        return getattr(_report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BUILTIN_COMMANDS",
    "NO_SKILL",
    "THRESHOLDS",
    "HealthReport",
    "Links",
    "Marker",
    "Segment",
    "Segmenter",
    "SkillHealth",
    "TimeWindow",
    "Tokens",
    "TraceSet",
    "band_of",
    "default_workers",
    "make_window",
    "notes",
    "observe",
    "parse_duration",
    "parse_instant",
    "parse_timestamp",
    "render_health",
    "segment_events",
    "skill_of_path",
    "skill_start",
    "top_gaps",
]
