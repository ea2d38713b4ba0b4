"""Prose helpers for text signals: which parts of an agent's message are its own prose
(not code, not a quote, not a table) and how that prose splits into sentences."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# quoted spans on one line: ASCII double quotes, curly quotes, CJK corner brackets, and ASCII
# single quotes only where they cannot be an apostrophe (not preceded / followed by a letter)
# (the lookahead lets the engine pass over every other character at once: 2.5× faster on agent text)
_QUOTES = re.compile(
    r"(?=[\"“‘「『'])(?:\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”|‘[^’\n]{0,400}’|「[^」\n]{0,400}」|『[^』\n]{0,400}』"
    r"|(?<!\w)'[^'\n]{1,400}'(?!\w))"
)
# what every fence, table row (a separator row may have no pipe) and blockquote line contains
_BLOCK_MARKS = ("```", "~~~", "|", ">", "---")
# line breaks other than "\n" that ``str.splitlines`` also splits at
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# a sentence ends at . ! ? followed by space, at CJK full stops, or at a line break
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？；]|\n")


def _is_table_row(line: str) -> bool:
    s = line.strip()
    if not s:
        return False
    return s.startswith("|") or bool(_TABLE_SEPARATOR.match(s)) or (s.endswith("|") and s.count("|") >= 2)


def excluded_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges of ``text`` that are not the agent's own prose: fenced code blocks
    (an unclosed fence runs to the end), markdown table rows, blockquote lines, inline code
    spans and quoted spans. Sorted, possibly overlapping (a span inside another is possible)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    fence: str | None = None
    fence_start = 0
    # inline code and quotes never span a line: with only "\n" breaks, one pass over the whole
    # text finds them (a match inside a fence or table row adds nothing: that line is out already)
    by_line = _OTHER_BREAKS.search(text) is not None
    if not by_line:
        for rx in (_INLINE_CODE, _QUOTES):
            spans.extend(q.span() for q in rx.finditer(text))
        if not any(mark in text for mark in _BLOCK_MARKS):
            return sorted(spans)  # no fence, table row or blockquote can start anywhere
    for line in text.splitlines(keepends=True):
        start, end = pos, pos + len(line)
        pos = end
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                spans.append((fence_start, end))
                fence = None
            continue
        if m:
            fence, fence_start = m.group(1), start
            continue
        if _is_table_row(line) or line.lstrip().startswith(">"):
            spans.append((start, end))
            continue
        if by_line:
            body = line.rstrip("\n")
            for rx in (_INLINE_CODE, _QUOTES):
                spans.extend((start + q.start(), start + q.end()) for q in rx.finditer(body))
    if fence is not None:
        spans.append((fence_start, len(text)))
    spans.sort()
    return spans


class ProseMask:
    """Answers "is this range inside code / a quote / a table?" for one text."""

    def __init__(self, text: str) -> None:
        merged: list[list[int]] = []
        for s, e in excluded_spans(text):
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        self._starts = [s for s, _ in merged]
        self._ends = [e for _, e in merged]

    def hides(self, start: int, end: int) -> bool:
        """True when ``[start, end)`` overlaps an excluded span."""
        j = bisect.bisect_right(self._starts, start) - 1
        if j >= 0 and self._ends[j] > start:
            return True
        return j + 1 < len(self._starts) and self._starts[j + 1] < end


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int
    end: int
    text: str


def sentences(text: str) -> list[Sentence]:
    """Split ``text`` into stripped, non-empty sentences with their offsets."""
    out: list[Sentence] = []
    begin = 0
    for m in _SENTENCE_END.finditer(text):
        _add_sentence(out, text, begin, m.end())
        begin = m.end()
    _add_sentence(out, text, begin, len(text))
    return out


def _add_sentence(out: list[Sentence], text: str, start: int, end: int) -> None:
    raw = text[start:end]
    stripped = raw.strip()
    if stripped:
        lead = len(raw) - len(raw.lstrip())
        out.append(Sentence(start + lead, start + lead + len(stripped), stripped))


def clip(text: str, limit: int) -> str:
    """One line, at most ``limit`` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
