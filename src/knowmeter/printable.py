"""Text that is safe to print on a terminal.

Agent output, tool inputs, traces, file names and variant names are untrusted: an escape sequence
in them (OSC 8 links, OSC 0 window titles, CSI cursor moves and colours), a carriage return that
overwrites the line, or a bidirectional override that reorders it would be obeyed by the
terminal. Every printer passes what it prints through ``printable`` (or ``printable_tree`` for a
whole report), which shows each such character as a visible escape (``\\x1b``, ``\\r``,
``\\u202e``) instead."""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

#: C0 and C1 controls (tab and newline included: a printed field is one line), DEL, the
#: bidirectional embeddings / overrides / isolates and the line / paragraph separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    code = ord(c)
    if c == "\n":
        return "\\n"
    if c == "\r":
        return "\\r"
    if c == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``str(text)`` with every control character shown as a visible escape (one line)."""
    s = str(text)
    return _UNSAFE.sub(_escape, s) if _UNSAFE.search(s) else s


def printable_tree(data: Any) -> Any:
    """A copy of ``data`` (dicts, lists, tuples, scalars) with every string — keys too — made
    ``printable``; numbers, booleans and None are returned as they are."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {printable(k) if isinstance(k, str) else k: printable_tree(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [printable_tree(v) for v in data]
    return data


class Printer:
    """Prints ``printable`` lines to a console, wrapped at word boundaries to its width: a word
    longer than a line is left whole, never cut, and nothing is truncated."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.width = max(console.width, 20)

    def line(self, text: str, *, indent: str = "", style: str | None = None) -> None:
        """``text`` wrapped; continuation lines align under the text after ``indent``, or hang
        by two spaces when there is no indent."""
        hang = " " * len(indent) if indent else "  "
        lines = textwrap.wrap(
            printable(text),
            self.width,
            initial_indent=indent,
            subsequent_indent=hang,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [""]
        for ln in lines:
            self.console.print(ln, style=style, soft_wrap=True, markup=False, highlight=False, emoji=False)

    def blank(self) -> None:
        self.console.print("", soft_wrap=True)
