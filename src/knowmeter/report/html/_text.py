"""Untrusted text made safe to look at: characters that would make a page show something other
than the data are shown as their code."""

from __future__ import annotations

import re
from typing import Any

#: characters that reorder the text around them (bidi controls): a page shows their code instead,
#: so it never shows words the data does not hold (report.js holds the same set)
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(value: Any) -> Any:
    """A plain string with its bidi controls shown as ``⟨U+202E⟩``; anything else (markup made
    here, numbers) as it is. Every ``{{ }}`` of the templates passes here."""
    if type(value) is not str:
        return value
    return BIDI.sub(lambda m: f"\u27e8U+{ord(m.group()):04X}\u27e9", value)
