"""Unicode-aware text units: NFC normalisation, user-perceived characters, and word tokens.

Every text comparison in grading goes through these helpers so that the same answer written in
any script, or with composed vs. decomposed accents, is measured the same way:

- ``nfc`` — canonical composition (``e`` + combining acute → ``é``), so a decomposed accent never
  counts as two characters or fails a ``contains``.
- ``graphemes`` — user-perceived characters (a simplified UAX #29): combining marks, emoji
  modifiers, variation selectors and ZWJ sequences stay with their base, regional-indicator pairs
  (flags) are one character, CR LF is one character.
- ``word_tokens`` — words for similarity metrics and word counts: runs of letters, digits and
  marks; every character of a script written without spaces (Han, kana, Thai, Lao, Khmer,
  Myanmar, Yi, Bopomofo) is a token of its own. Punctuation and symbols separate tokens and are
  dropped.
"""

from __future__ import annotations

import unicodedata

_ZWJ = "\u200d"
# Code-point ranges of scripts written without spaces between words: each character is a token.
_UNSPACED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x31A0, 0x31FF),  # Bopomofo extended, Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA000, 0xA4CF),  # Yi
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0x20000, 0x3134F),  # CJK extensions B–G
)
# Spacing marks that are letters by category but extend the previous cluster (UAX #29 SpacingMark).
_SPACING_EXTEND = {"\u0e33", "\u0eb3"}


def nfc(text: str) -> str:
    """Canonical composition (NFC)."""
    return unicodedata.normalize("NFC", text)


def fold(text: str, *, ignore_case: bool) -> str:
    """NFC, and full Unicode case folding (``ß`` → ``ss``) when ``ignore_case``."""
    text = nfc(text)
    return nfc(text.casefold()) if ignore_case else text


def is_unspaced(ch: str) -> bool:
    """True for a character of a script written without spaces between words (Han, kana, Thai…)."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _UNSPACED_RANGES)


def _extends(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return (
        cat[0] == "M"
        or ch == _ZWJ
        or ch in _SPACING_EXTEND
        or 0x1F3FB <= ord(ch) <= 0x1F3FF
        or 0xE0020 <= ord(ch) <= 0xE007F
    )


def _is_regional_indicator(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _is_pictographic(ch: str) -> bool:
    cp = ord(ch)
    return unicodedata.category(ch) == "So" or 0x1F000 <= cp <= 0x1FAFF


def graphemes(text: str) -> list[str]:
    """Split NFC ``text`` into user-perceived characters (simplified extended grapheme clusters)."""
    clusters: list[str] = []
    for ch in nfc(text):
        if clusters:
            last = clusters[-1]
            joins = (
                _extends(ch)
                or (last[-1] == "\r" and ch == "\n")
                or (last[-1] == _ZWJ and _is_pictographic(ch))
                or (
                    _is_regional_indicator(ch)
                    and _is_regional_indicator(last[-1])
                    and sum(map(_is_regional_indicator, last)) % 2 == 1
                )
            )
            if joins:
                clusters[-1] = last + ch
                continue
        clusters.append(ch)
    return clusters


def char_length(text: str) -> int:
    """Length in user-perceived characters."""
    return len(graphemes(text))


def word_tokens(text: str, *, ignore_case: bool = True) -> list[str]:
    """Word tokens of ``text`` (see the module docstring), case-folded when ``ignore_case``."""
    tokens: list[str] = []
    word: list[str] = []
    after_unspaced = False  # the last token emitted was a single unspaced-script character

    def flush() -> None:
        if word:
            tokens.append("".join(word))
            word.clear()

    for ch in fold(text, ignore_case=ignore_case):
        if _extends(ch):
            if word:
                word.append(ch)
            elif after_unspaced:
                tokens[-1] += ch
            continue
        if is_unspaced(ch):
            flush()
            tokens.append(ch)
            after_unspaced = True
            continue
        after_unspaced = False
        if unicodedata.category(ch)[0] in "LN":
            word.append(ch)
        else:
            flush()
    flush()
    return tokens
