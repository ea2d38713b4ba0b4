"""The verbatim-overlap check of the comprehension research (Appendix A.3), in code.

Text is lower-cased, every character that is neither a letter, a digit nor whitespace becomes a
space, and tokens of three characters or fewer and the 25 listed stopwords are dropped. An answer
fails when any ``n`` consecutive remaining tokens (n = 6 by default) also occur consecutively in a
source (the skill body without frontmatter, the case's concept field). Letters and digits are
Unicode-aware; on ASCII text this is exactly A.3's ``[^a-z0-9\\s]`` rule. Each source is
tokenised on its own, so no n-gram straddles two sources.

It lives here, below ``comprehension``, because the linter's far-transfer rule (R4) counts shared
n-grams with the same tokens the comprehension grader uses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from knowmeter import defaults

#: Appendix A.3's starting stopword list (the English functional words longer than 3 characters).
STOPWORDS = frozenset(
    "this that they them with from have will would could should their there where when what which while "
    "about after before between into than then".split()
)

_ALNUM_RUN = re.compile(r"[^\W_]+")

Gram = tuple[str, ...]


def tokens(text: str) -> list[str]:
    """A.3's tokens of ``text``: lower-cased, split at every non-alphanumeric character, short
    words and stopwords dropped."""
    return [t for t in _ALNUM_RUN.findall(text.lower()) if len(t) > 3 and t not in STOPWORDS]


def ngrams(toks: list[str], n: int) -> list[Gram]:
    """The ``n``-grams of ``toks``, in order, with repeats."""
    return list(zip(*(toks[i:] for i in range(n)), strict=False))


@lru_cache(maxsize=256)
def source_grams(text: str, n: int) -> frozenset[Gram]:
    """The n-grams of one source text; cached, so a skill body shared by every case of a run is
    tokenised once."""
    return frozenset(ngrams(tokens(text), n))


@dataclass(frozen=True, slots=True)
class Overlap:
    """The check's outcome: ``passed`` when no n-gram is shared; ``ngrams`` the shared ones in the
    order they appear in the answer."""

    passed: bool
    ngrams: tuple[str, ...]
    n: int

    def to_dict(self) -> dict[str, object]:
        return {"passed": self.passed, "n": self.n, "overlap_ngrams": list(self.ngrams)}


class SourceGrams:
    """The n-grams of the sources an answer is checked against (each source's set is cached)."""

    __slots__ = ("grams", "n")

    def __init__(self, sources: Iterable[str], n: int = defaults.VERBATIM_NGRAM) -> None:
        if n < 1:
            raise ValueError(f"the n-gram size must be >= 1, got {n}")
        self.n = n
        self.grams = tuple(source_grams(source, n) for source in sources)

    def check(self, answer: str) -> Overlap:
        """The answer's shared n-grams (each once, first occurrence first)."""
        shared = dict.fromkeys(g for g in ngrams(tokens(answer), self.n) if any(g in s for s in self.grams))
        return Overlap(not shared, tuple(" ".join(g) for g in shared), self.n)


def verbatim_overlap(answer: str, sources: Iterable[str], n: int = defaults.VERBATIM_NGRAM) -> Overlap:
    """Appendix A.3's check of ``answer`` against ``sources`` (body, concept field)."""
    return SourceGrams(sources, n).check(answer)
