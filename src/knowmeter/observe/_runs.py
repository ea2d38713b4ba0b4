"""One run per file: a Claude stream-json or Codex ``exec --json`` file is one run's output.

A file that holds more than that (``cat run1.jsonl run2.jsonl > all.jsonl``, or the same run
written twice) is cut at every later run's start record (stream-json ``system``/``init``, Codex
``thread.started`` or ``session_meta``) — also when it is glued to the end of the line before it
(the CLIs end their last line without a newline, so ``cat`` joins two runs' records on one line):

- a part whose every line is already in the first run **repeats** it: left out (counted once);
- a part that starts another session (another ``session_id`` / ``thread_id``, or another format)
  is a **concatenated** run: left out (only the first run is counted) — put each run in its own file;
- a part that goes on with the first run's session (same id: a streaming-input session starts each
  turn with its own ``init``) belongs to it and is read.

Either way the file gets a note that names it, says what was counted and what to do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowmeter.traces import Trace, TraceFormat, loads_line, parse_claude_stream, parse_codex_exec

#: The formats whose files hold one run each.
ONE_RUN_FORMATS = frozenset({TraceFormat.CLAUDE_STREAM, TraceFormat.CODEX_EXEC})
_START_HINTS = ('"init"', "thread.started", "session_meta")


@dataclass(frozen=True, slots=True)
class _Start:
    index: int  # into the file's records
    kind: str
    session: str | None


def _unglue(lines: list[str]) -> list[tuple[int, str]]:
    """``(line number, record text)`` for every line; a line holding several JSON objects one after
    another (``…}{…``) gives one entry per object, each with that line's number."""
    out: list[tuple[int, str]] = []
    decoder = json.JSONDecoder()
    for lineno, line in enumerate(lines, 1):
        if "}{" not in line:
            out.append((lineno, line))
            continue
        parts: list[str] = []
        text, at = line.strip(), 0
        try:
            while at < len(text):
                _, end = decoder.raw_decode(text, at)
                parts.append(text[at:end] + "\n")
                at = end
        except (ValueError, RecursionError):
            parts = [line]  # not whole objects: left to the parser, which counts it as a bad line
        out += [(lineno, part) for part in parts]
    return out


def _start_of(index: int, line: str) -> _Start | None:
    """The run start a line records, if it is one (cheap substring check before decoding)."""
    if not any(hint in line for hint in _START_HINTS):
        return None
    try:
        rec = loads_line(line)
    except ValueError:
        return None
    if not isinstance(rec, dict):
        return None
    rtype = rec.get("type")
    if rtype == "system" and rec.get("subtype") == "init":
        return _Start(index, "system/init", _text(rec.get("session_id")))
    if rtype == "thread.started":
        return _Start(index, "thread.started", _text(rec.get("thread_id")))
    if rtype == "session_meta":
        payload = rec.get("payload")
        return _Start(index, "session_meta", _text(payload.get("id")) if isinstance(payload, dict) else None)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def first_run(path: Path, lines: list[str]) -> tuple[list[str], str | None]:
    """The records of the file's first run (and its continuations), and a note when anything was
    left out (see the module docstring); ``lines`` are the file's lines in order."""
    records = _unglue(lines)
    starts = [s for i, (_, text) in enumerate(records) if (s := _start_of(i, text)) is not None]
    if len(starts) < 2:
        return [text for _, text in records], None
    first = starts[0]
    bounds = [0, *(s.index for s in starts[1:]), len(records)]
    kept = [text for _, text in records[: bounds[1]]]
    seen = {text.strip() for text in kept}
    repeats: list[str] = []
    others: list[str] = []
    for start, lo, hi in zip(starts[1:], bounds[1:-1], bounds[2:], strict=True):
        part = [text for _, text in records[lo:hi]]
        span = f"{records[lo][0]}–{records[hi - 1][0]}"
        if all(text.strip() in seen for text in part):
            repeats.append(span)
        elif start.kind == first.kind and start.session is not None and start.session == first.session:
            kept += part
            seen.update(text.strip() for text in part)
        else:
            others.append(f"{span} ({f'session {start.session}' if start.session else start.kind})")
    if not repeats and not others:
        return [text for _, text in records], None
    return kept, _note(path, first, repeats, others)


def _note(path: Path, first: _Start, repeats: list[str], others: list[str]) -> str:
    said = []
    if repeats:
        said.append(f"repeats itself: line(s) {', '.join(repeats)} are a copy of the run before them, counted once")
    if others:
        said.append(
            f"holds {len(others) + 1} runs one after another: only the first "
            f"({f'session {first.session}' if first.session else first.kind}) was counted, not line(s) "
            f"{', '.join(others)}"
        )
    fix = "put each run in its own file" if others else "keep one copy of the run in the file"
    return f"{path}: {'; it also '.join(said)} — {fix}"


def load_first_run(path: Path, fmt: TraceFormat) -> tuple[Trace, str | None]:
    """Load a one-run trace file (``ONE_RUN_FORMATS``) as ``first_run`` cuts it, with its note."""
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        lines, note = first_run(path, fh.readlines())
    parse = parse_claude_stream if fmt is TraceFormat.CLAUDE_STREAM else parse_codex_exec
    trace = parse(lines)[0]
    trace.meta["path"] = str(path)
    return trace, note
