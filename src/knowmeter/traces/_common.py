"""Shared pieces of the trace adapters: tolerant JSON-lines reading, content → text, usage, run summary."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from knowmeter.jsonio import without_lone_surrogates
from knowmeter.traces._ir import Event, ToolCallEvent, Trace

#: Keys of a normalised usage dict (``Usage``). One meaning for every source (Anthropic's):
#: ``input_tokens`` are input tokens neither read from nor written to the prompt cache,
#: ``cache_read_tokens`` those read from it, ``cache_creation_tokens`` those written to it,
#: ``output_tokens`` everything generated (reasoning included). The input a model saw is the sum of
#: the first and the two cache counts. OpenAI / Codex report ``input_tokens`` *including*
#: ``cached_input_tokens``; ``openai_usage`` (and the ``openai`` executor) take the cached part out.
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")

#: Token usage — the one representation, from trace adapters, executors (``ExecResult.usage``),
#: stored results and observe: a plain dict with the ``USAGE_KEYS``; None = not reported (unknown,
#: never 0). A plain dict so the trace and observe hot paths add into it without allocating.
Usage = dict[str, int | None]

Line = str | bytes | Mapping[str, Any]


_DECODER = json.JSONDecoder()
_BOM = b"\xef\xbb\xbf"
_BUFFER = 1 << 18  # session lines run to a few KB, tool outputs sometimes to 100 KB


def loads_line(line: str | bytes) -> Any:
    """Decode one JSON line (bytes are UTF-8); raises ``ValueError`` when it is not JSON (e.g. truncated).

    ``orjson`` decodes the line when it is strict JSON; anything it refuses (invalid UTF-8, which
    reads as U+FFFD as a text-mode file would give it; lone surrogate escapes — read as U+FFFD —, ``NaN``,
    text after the value) takes the standard library's path, so the result is what ``json`` gives. The one
    difference: an integer beyond 64 bits comes back as a float (no field a trace is read for
    holds one)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    try:
        value = _DECODER.raw_decode(line)[0]  # ignores text after the value, as the newline
    except json.JSONDecodeError:  # e.g. leading blanks: the careful path
        value = json.loads(line)
    return without_lone_surrogates(value)  # not text, and not writable into results.jsonl


def read_lines(path: Path) -> Iterator[bytes]:
    """The lines of a JSON-lines file as bytes: what a text-mode read gives, undecoded. A leading
    UTF-8 byte-order mark is dropped; a file whose lines end in a lone CR is split at them (LF and
    CRLF lines pass as they are: the readers accept both). Bytes, read with a buffer larger than
    most lines, go to ``loads_line`` undecoded (see design/decisions.md, speed tricks)."""
    with open(path, "rb", buffering=_BUFFER) as fh:
        first = fh.readline().removeprefix(_BOM)
        if b"\r" in first.rstrip(b"\r\n") or first.endswith(b"\r"):  # classic Mac line ends
            for line in itertools.chain((first,), fh):
                yield from line.replace(b"\r\n", b"\n").replace(b"\r", b"\n").splitlines(keepends=True)
            return
        if first:
            yield first
        yield from fh


def empty_usage() -> Usage:
    """A usage dict with every count unknown."""
    return dict.fromkeys(USAGE_KEYS)


def make_usage(
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cache_read_tokens: int | None = None,
    cache_creation_tokens: int | None = None,
) -> Usage:
    """A usage dict from its four counts (in ``USAGE_KEYS``' meaning)."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_tokens": cache_read_tokens,
        "cache_creation_tokens": cache_creation_tokens,
    }


def usage_from(stored: Mapping[str, Any] | None) -> Usage:
    """A usage dict read back from stored JSON: the ``USAGE_KEYS`` only, a missing or non-integer
    count unknown."""
    stored = stored or {}
    return {
        k: v if isinstance(v, int) and not isinstance(v, bool) else None for k in USAGE_KEYS for v in (stored.get(k),)
    }


_USAGE_NAMES = (  # each normalised key and the names sources use for it, first found wins
    ("input_tokens", ("input_tokens", "inputTokens")),
    ("output_tokens", ("output_tokens", "outputTokens")),
    ("cache_read_tokens", ("cache_read_input_tokens", "cacheReadInputTokens", "cached_input_tokens")),
    ("cache_creation_tokens", ("cache_creation_input_tokens", "cacheCreationInputTokens", "cache_write_input_tokens")),
)


def anthropic_usage(u: Any) -> dict[str, int | None]:
    """Normalise an Anthropic ``usage`` object (snake_case API form or camelCase ``modelUsage``)."""
    if not isinstance(u, Mapping):
        return empty_usage()
    get = u.get
    i, o, r, c = (
        get("input_tokens"),
        get("output_tokens"),
        get("cache_read_input_tokens"),
        get("cache_creation_input_tokens"),
    )
    if type(i) is int and type(o) is int and type(r) is int and type(c) is int:  # the API's own form
        return {"input_tokens": i, "output_tokens": o, "cache_read_tokens": r, "cache_creation_tokens": c}
    out: dict[str, int | None] = {}
    for key, names in _USAGE_NAMES:
        count = None
        for n in names:
            v = get(n)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                count = int(v)
                break
        out[key] = count
    return out


def openai_usage(u: Any) -> dict[str, int | None]:
    """Normalise an OpenAI / Codex usage object (``input_tokens`` includes ``cached_input_tokens``)
    to the meaning of ``USAGE_KEYS``: the cached part is moved out of ``input_tokens``."""
    out = anthropic_usage(u)
    total, cached = out["input_tokens"], out["cache_read_tokens"]
    if total is not None and cached is not None:
        out["input_tokens"] = max(0, total - cached)
    return out


def model_usage_totals(per_model: Any) -> dict[str, int | None] | None:
    """The sum over Claude's ``result.modelUsage`` (one entry per model, the secondary model —
    e.g. haiku for titles and summaries — included), or None when it lists no model."""
    if not isinstance(per_model, Mapping) or not per_model:
        return None
    total = empty_usage()
    for entry in per_model.values():
        add_usage(total, anthropic_usage(entry))
    return total


def add_usage(total: dict[str, int | None], part: Mapping[str, int | None]) -> None:
    """Add ``part`` into ``total`` in place; unknown (None) counts stay unknown until one is known."""
    for k in USAGE_KEYS:
        v = part.get(k)
        if v is not None:
            total[k] = (total.get(k) or 0) + v


@dataclass(slots=True)
class UsageTotals:
    """The sum of many messages' usage, each message counted once with its latest usage (``add_usage``
    of every message, without re-adding them all each time it is asked for). Record a message's
    usage with ``latest[message_id] = raw_usage`` (a plain store: it is done for every line)."""

    latest: dict[str, Any] = field(default_factory=dict)  # raw usage of the messages changed since ``totals``
    _counted: dict[str, dict[str, int | None]] = field(default_factory=dict)
    _sums: dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE_KEYS, 0))
    _known: dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE_KEYS, 0))  # messages with a count

    def totals(self) -> dict[str, int | None]:
        """Re-count the messages in ``latest`` (then emptied); the totals."""
        for mid, raw in self.latest.items():
            before = self._counted.get(mid)
            if before is not None:  # counted before with an earlier line's usage: take that back
                self._add(before, -1)
            self._counted[mid] = now = anthropic_usage(raw)
            self._add(now, 1)
        self.latest.clear()
        return {k: self._sums[k] if self._known[k] else None for k in USAGE_KEYS}

    def _add(self, part: dict[str, int | None], sign: int) -> None:
        for k, v in part.items():
            if v is not None:
                self._sums[k] += sign * v
                self._known[k] += sign


@dataclass(slots=True)
class LineStats:
    """Counts kept while reading a JSON-lines source; a truncated last line is skipped, not fatal."""

    lines: int = 0
    bad_lines: int = 0
    last_bad_line: int = 0

    def bad(self) -> None:
        self.bad_lines += 1
        self.last_bad_line = self.lines

    def write_meta(self, meta: dict[str, Any]) -> None:
        meta["lines"] = self.lines
        meta["bad_lines"] = self.bad_lines
        meta["truncated_last_line"] = self.bad_lines > 0 and self.last_bad_line == self.lines


def json_records(lines: Iterable[Line], stats: LineStats) -> Iterator[dict[str, Any]]:
    """Yield each line as a JSON object. Blank lines are ignored; lines that are not a JSON object
    (e.g. a truncated last line) are counted in ``stats`` and skipped. Mappings pass through."""
    for raw in lines:
        if isinstance(raw, Mapping):
            stats.lines += 1
            yield dict(raw)
            continue
        if not raw.strip():
            continue
        stats.lines += 1
        try:
            rec = loads_line(raw)
        except ValueError:
            stats.bad()
            continue
        if isinstance(rec, dict):
            yield rec
        else:
            stats.bad()


def content_text(content: Any) -> str:
    """Text of a message / tool-result ``content``: a string, a list of blocks, or null."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif block.get("type") in ("image", "input_image"):
                    parts.append("[image]")
        return "\n".join(parts)
    return str(content)


def as_int(v: Any) -> int | None:
    """``v`` as an int when it is a finite number (not a bool), else None (``NaN`` / ``Infinity``
    in a trace are unknown, not a crash)."""
    if isinstance(v, bool) or not isinstance(v, int | float) or (isinstance(v, float) and not math.isfinite(v)):
        return None
    return int(v)


@dataclass(slots=True)
class RunSummary:
    """What one agent run reported about itself (from Claude's ``result`` line or Codex's
    ``turn.completed``), in the shape an executor needs for its ``ExecResult``.

    ``usage`` is a ``Usage`` (``USAGE_KEYS``); ``cost_usd`` is None when the source
    reports no cost (Codex) — unknown, never a fake 0.
    """

    output: str = ""
    usage: dict[str, int | None] = field(default_factory=empty_usage)
    cost_usd: float | None = None
    num_turns: int | None = None
    duration_ms: float | None = None
    duration_api_ms: float | None = None
    error: str | None = None
    session_id: str | None = None
    model: str | None = None
    api_error_status: int | None = None
    permission_denials: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class SessionTrace:
    """One on-disk agent session: the main transcript plus its subagent transcripts (Claude
    ``<session>/subagents/agent-*.jsonl``; compaction runs have ``meta["compaction"] = True``)."""

    session_id: str
    path: Path
    main: Trace
    subagents: list[Trace] = field(default_factory=list)

    def traces(self) -> Iterator[Trace]:
        """The main trace, then each subagent trace."""
        yield self.main
        yield from self.subagents

    def events(self) -> Iterator[Event]:
        """Every event of the session (main first, then subagents; subagent events carry ``agent_id``)."""
        for trace in self.traces():
            yield from trace.events

    def tool_calls(self) -> list[ToolCallEvent]:
        return [e for e in self.events() if isinstance(e, ToolCallEvent)]
