"""Untrusted text made safe to look at: characters that would make a page show something other
than the data are shown as their code."""

from __future__ import annotations

import re
from typing import Any

#: characters a page would not show as they are: bidi controls reorder the text around them, and
#: control characters (tab, newline and carriage return excepted) are dropped (NUL) or shown as
#: nothing; a page shows their code instead, so it never shows words the data does not hold
#: (report.js holds the same set)
HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(value: Any) -> Any:
    """A plain string with its ``HIDDEN`` characters shown as ``⟨U+202E⟩``; anything else (markup
    made here, numbers) as it is. Every ``{{ }}`` of the templates passes here."""
    if type(value) is not str:
        return value
    return HIDDEN.sub(lambda m: f"\u27e8U+{ord(m.group()):04X}\u27e9", value)
