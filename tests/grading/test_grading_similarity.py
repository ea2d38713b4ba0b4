"""Tokens, graphemes and the similarity metrics against textbook values and independent
implementations written here (deliberately in a different style from the library's)."""

from __future__ import annotations

import math
import unicodedata
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowmeter.grading import bleu, char_length, graphemes, levenshtein, rouge_n, word_tokens
from tests.grading.grading_helpers import check

# --- tokens and characters ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Hello, World!", ["hello", "world"]),
        ("AI模型很好。", ["ai", "模", "型", "很", "好"]),
        ("Crème brûlée, naïve café", ["crème", "brûlée", "naïve", "café"]),
        ("cafe\u0301", ["café"]),  # NFD → NFC: the accent stays on its letter
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # Devanagari vowel signs and virama stay in the word
        ("ภาษาไทย", ["ภ", "า", "ษ", "า", "ไ", "ท", "ย"]),  # unspaced script: character tokens
        ("กำ", ["กำ"]),  # SARA AM extends the consonant
        ("한국어 문장", ["한국어", "문장"]),  # Hangul is written with spaces: word tokens
        ("ひらがなカタカナ", list("ひらがなカタカナ")),
        ("Straße STRASSE", ["strasse", "strasse"]),  # full case folding
        ("Привет, мир", ["привет", "мир"]),
        ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),
        ("3.14 r2-d2", ["3", "14", "r2", "d2"]),
        ("", []),
    ],
)
def test_word_tokens(text: str, tokens: list[str]) -> None:
    assert word_tokens(text) == tokens


def test_word_tokens_keep_case_on_request() -> None:
    assert word_tokens("Party party", ignore_case=False) == ["Party", "party"]


@pytest.mark.parametrize(
    ("text", "clusters"),
    [
        ("abc", ["a", "b", "c"]),
        ("e\u0301", ["é"]),
        ("👍🏽", ["👍🏽"]),  # skin-tone modifier
        ("👨\u200d👩\u200d👧", ["👨\u200d👩\u200d👧"]),  # ZWJ family
        ("🇯🇵🇫🇷", ["🇯🇵", "🇫🇷"]),  # flags pair regional indicators
        ("❤️", ["❤️"]),  # variation selector
        ("a\r\nb", ["a", "\r\n", "b"]),
        ("自动驾驶", ["自", "动", "驾", "驶"]),
    ],
)
def test_graphemes(text: str, clusters: list[str]) -> None:
    assert graphemes(text) == clusters
    assert char_length(text) == len(clusters)


def test_graphemes_agree_with_the_regex_module() -> None:
    regex = pytest.importorskip("regex")
    texts = [
        "Zoë naïve café",
        "👩🏾\u200d💻 codes",
        "🇩🇪🇯🇵🇺🇸x",
        "Tiếng Việt",
        "ภาษาไทย",
        "한국어",
        "e\u0301\u0302x",
        "مرحبا",
        "✌🏻✌️",
    ]
    for text in texts:
        assert graphemes(text) == regex.findall(r"\X", unicodedata.normalize("NFC", text)), text


# --- Levenshtein ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("kitten", "sitting", 3),  # the textbook example
        ("flaw", "lawn", 2),
        ("", "abc", 3),
        ("abc", "abc", 0),
        ("我爱北京", "我爱上海", 2),
        ("café", "cafe\u0301", 0),  # after NFC they are the same
        ("👍🏽", "👍", 1),  # one character changed, not one code point removed
        ("🇯🇵", "🇫🇷", 1),
    ],
)
def test_levenshtein_textbook(a: str, b: str, distance: int) -> None:
    assert levenshtein(graphemes(a), graphemes(b)) == distance


def reference_levenshtein(a: str, b: str) -> int:
    """The recursive definition, memoised."""

    @cache
    def d(i: int, j: int) -> int:
        if i == 0 or j == 0:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))

    return d(len(a), len(b))


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="abcé中文 ", max_size=12),
    st.text(alphabet="abcé中文 ", max_size=12),
    st.integers(min_value=0, max_value=6),
)
@pytest.mark.slow
def test_levenshtein_matches_recursive_definition(a: str, b: str, limit: int) -> None:
    exact = reference_levenshtein(a, b)
    assert levenshtein(list(a), list(b)) == exact
    assert levenshtein(list(a), list(b), limit=limit) == min(exact, limit + 1)


def test_levenshtein_with_a_limit_is_fast_on_long_texts() -> None:
    import time

    a = list("自动驾驶并非完全无监督。" * 800)
    b = list(a)
    for i in (100, 5000, 9000):
        b[i] = "x"
    start = time.monotonic()
    assert levenshtein(a, b, limit=20) == 3
    assert levenshtein(a, list(reversed(a)), limit=20) == 21
    assert time.monotonic() - start < 2.0


def test_levenshtein_assertion() -> None:
    assert check({"type": "levenshtein_max", "reference": "sitting", "value": 3}, "kitten") is True
    assert check({"type": "levenshtein_max", "reference": "sitting", "threshold": 2}, "kitten") is False
    assert check({"type": "levenshtein_max", "reference": "Kitten", "value": 0, "ignore_case": True}, "kitten")
    assert check({"type": "levenshtein_max", "reference": "我爱北京", "value": 1}, "我爱上海") is False
    assert check({"type": "levenshtein_max", "reference": "sitting", "value": 3, "not": True}, "kitten") is False


# --- ROUGE-N -------------------------------------------------------------------------------


def test_rouge_textbook_example() -> None:
    # reference "the cat was under the bed", candidate "the cat was found under the bed"
    cand = word_tokens("the cat was found under the bed")
    ref = word_tokens("the cat was under the bed")
    r1 = rouge_n(cand, [ref], 1)
    assert r1.recall == 1.0 and r1.precision == pytest.approx(6 / 7)
    r2 = rouge_n(cand, [ref], 2)  # overlap: the-cat, cat-was, under-the, the-bed
    assert r2.recall == pytest.approx(4 / 5)
    assert r2.precision == pytest.approx(4 / 6)
    assert r2.f1 == pytest.approx(2 * (4 / 5) * (4 / 6) / (4 / 5 + 4 / 6))


def test_rouge_cjk_characters_are_tokens() -> None:
    r1 = rouge_n(word_tokens("合并排序"), [word_tokens("合并排序算法")], 1)
    assert r1.precision == 1.0 and r1.recall == pytest.approx(4 / 6)


def reference_rouge_recall(cand: list[str], ref: list[str], n: int) -> float:
    """Clipped overlap by removing matched n-grams from a list, one at a time."""
    ref_grams = [ref[i : i + n] for i in range(len(ref) - n + 1)]
    pool = list(ref_grams)
    hits = 0
    for gram in (cand[i : i + n] for i in range(len(cand) - n + 1)):
        if gram in pool:
            pool.remove(gram)
            hits += 1
    return hits / len(ref_grams) if ref_grams else 0.0


WORDS = st.lists(st.sampled_from(["the", "cat", "sat", "猫", "在", "mat"]), max_size=10)


@settings(max_examples=150, deadline=None)
@given(WORDS, WORDS, st.integers(min_value=1, max_value=3))
@pytest.mark.slow
def test_rouge_recall_matches_independent_count(cand: list[str], ref: list[str], n: int) -> None:
    assert rouge_n(cand, [ref], n).recall == pytest.approx(reference_rouge_recall(cand, ref, n))


def test_rouge_assertion() -> None:
    raw = {"type": "rouge_n_min", "reference": "the cat was under the bed", "n": 2, "value": 0.7}
    assert check(raw, "The cat was found under the bed.") is True  # F1 0.727, case ignored
    assert check({**raw, "value": 0.75}, "The cat was found under the bed.") is False
    assert check({**raw, "measure": "recall", "value": 0.8}, "the cat was found under the bed") is True
    assert check({**raw, "reference": ["a b c", "the cat was under the bed"]}, "the cat was under the bed")


# --- BLEU ----------------------------------------------------------------------------------

HYP1 = "It is a guide to action which ensures that the military always obeys the commands of the party"
REFS = [
    "It is a guide to action that ensures that the military will forever heed Party commands",
    "It is the guiding principle which guarantees the military forces always being under the command of the Party",
    "It is the practical guide for the army always to heed the directions of the party",
]


def test_bleu_papineni_example() -> None:
    # the example of Papineni et al. (2002) as used in NLTK's documentation: 0.5045666840058485
    cand = word_tokens(HYP1, ignore_case=False)
    refs = [word_tokens(r, ignore_case=False) for r in REFS]
    assert bleu(cand, refs, smoothing="none") == pytest.approx(0.5045666840058485, abs=1e-12)


def test_bleu_modified_precision_clips_repeats() -> None:
    # "the the the the the the the" vs "the cat is on the mat": unigram modified precision 2/7,
    # candidate longer than reference so no brevity penalty
    cand = ["the"] * 7
    assert bleu(cand, [word_tokens("the cat is on the mat")], max_n=1) == pytest.approx(2 / 7)


def test_bleu_brevity_penalty_and_smoothing() -> None:
    ref = word_tokens("the cat is on the mat")
    assert bleu(["the", "cat"], [ref], max_n=1) == pytest.approx(math.exp(1 - 6 / 2))
    assert bleu(["dog"], [ref], smoothing="none") == 0.0
    # exp smoothing: p1 = 1/(2·1); orders 2-4 are beyond a one-token candidate
    assert bleu(["dog"], [ref]) == pytest.approx(math.exp(1 - 6) * 0.5)
    assert bleu([], [ref]) == 0.0


def reference_bleu(cand: list[str], refs: list[list[str]], max_n: int) -> float:
    """Unsmoothed BLEU, written from the paper's formula with explicit loops."""
    logs = []
    for n in range(1, max_n + 1):
        grams = [tuple(cand[i : i + n]) for i in range(len(cand) - n + 1)]
        if not grams:
            return 0.0
        clipped = 0
        for g in set(grams):
            max_ref = max(sum(1 for i in range(len(r) - n + 1) if tuple(r[i : i + n]) == g) for r in refs)
            clipped += min(grams.count(g), max_ref)
        if clipped == 0:
            return 0.0
        logs.append(math.log(clipped / len(grams)))
    c = len(cand)
    r = sorted((abs(len(ref) - c), len(ref)) for ref in refs)[0][1]
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return bp * math.exp(sum(logs) / max_n)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from("abcd"), min_size=1, max_size=12),
    st.lists(st.lists(st.sampled_from("abcde"), min_size=1, max_size=12), min_size=1, max_size=3),
    st.integers(min_value=1, max_value=4),
)
@pytest.mark.slow
def test_bleu_matches_independent_implementation(cand: list[str], refs: list[list[str]], max_n: int) -> None:
    assert bleu(cand, refs, max_n=max_n, smoothing="none") == pytest.approx(reference_bleu(cand, refs, max_n))


def test_bleu_assertion() -> None:
    raw = {"type": "bleu_min", "reference": REFS, "value": 0.5, "smoothing": "none", "ignore_case": False}
    assert check(raw, HYP1) is True
    assert check({**raw, "value": 0.51}, HYP1) is False
    assert check({"type": "bleu_min", "reference": "合并排序算法", "value": 0.99}, "合并排序算法") is True
