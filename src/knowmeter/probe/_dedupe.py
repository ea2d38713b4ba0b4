"""De-duplicating questions: normalised text, then content-word overlap against a threshold."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

#: two questions whose content words overlap at least this much (Jaccard) are duplicates
SIMILARITY_THRESHOLD = 0.8
_WORD = re.compile(r"\w+")
_STOP = frozenset(
    """a an and are as at be by can do does for from how i in is it of on or our should the this to
we what when where which who why with you your about does did there their my me say says said know tell""".split()
)


def normalise(text: str) -> str:
    """Case-folded, NFKC, punctuation dropped, whitespace collapsed."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def _content(text: str) -> frozenset[str]:
    words = normalise(text).split()
    return frozenset(w for w in words if w not in _STOP) or frozenset(words)


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of the two questions' content words (1.0 for the same normalised text)."""
    if normalise(a) == normalise(b):
        return 1.0
    wa, wb = _content(a), _content(b)
    return len(wa & wb) / len(wa | wb) if wa or wb else 0.0


def duplicate_of(text: str, against: Iterable[str], threshold: float = SIMILARITY_THRESHOLD) -> str | None:
    """The first of ``against`` that ``text`` duplicates, or None."""
    return next((other for other in against if similarity(text, other) >= threshold), None)
