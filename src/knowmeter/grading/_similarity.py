"""Reference-based similarity metrics over token sequences: ROUGE-N, BLEU, Levenshtein.

The functions take already-tokenised sequences (see ``_unicode.word_tokens`` / ``graphemes``) so
they are script-agnostic. Definitions follow the original papers:

- ROUGE-N (Lin, 2004): clipped n-gram overlap; recall = overlap / reference n-grams, precision =
  overlap / candidate n-grams, F1 their harmonic mean. With several references the best F1 wins.
- BLEU (Papineni et al., 2002): geometric mean of clipped (modified) n-gram precisions for
  n = 1..max_n with uniform weights, times the brevity penalty against the closest reference
  length. ``smoothing="exp"`` is the NIST/sacreBLEU sentence-level smoothing (a zero match count
  at order n gets precision 1 / (2^k · total_n), k counting the zero orders so far, and orders
  the candidate is too short for are left out); ``"none"`` gives 0 whenever an order has no match.
- Levenshtein: the minimum number of insertions, deletions and substitutions.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Smoothing = Literal["exp", "none"]


def ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    """Counts of the n-grams of ``tokens``."""
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


@dataclass(frozen=True, slots=True)
class RougeScore:
    precision: float
    recall: float
    f1: float


def rouge_n(candidate: Sequence[str], references: Sequence[Sequence[str]], n: int = 1) -> RougeScore:
    """ROUGE-N of ``candidate`` against the best-matching of ``references``."""
    if n < 1:
        raise ValueError("n must be >= 1")
    cand = ngrams(candidate, n)
    best = RougeScore(0.0, 0.0, 0.0)
    for reference in references:
        ref = ngrams(reference, n)
        overlap = sum((cand & ref).values())
        precision = overlap / sum(cand.values()) if cand else 0.0
        recall = overlap / sum(ref.values()) if ref else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        if f1 > best.f1 or (f1 == best.f1 and recall > best.recall):
            best = RougeScore(precision, recall, f1)
    return best


def bleu(
    candidate: Sequence[str], references: Sequence[Sequence[str]], *, max_n: int = 4, smoothing: Smoothing = "exp"
) -> float:
    """Sentence BLEU in [0, 1] of ``candidate`` against ``references``."""
    if max_n < 1:
        raise ValueError("max_n must be >= 1")
    if not candidate or not references:
        return 0.0
    log_sum = 0.0
    orders = 0
    zero_orders = 0
    for n in range(1, max_n + 1):
        cand = ngrams(candidate, n)
        total = sum(cand.values())
        if total == 0:  # candidate shorter than n
            if smoothing == "none":
                return 0.0
            break
        max_ref: Counter[tuple[str, ...]] = Counter()
        for reference in references:
            max_ref |= ngrams(reference, n)
        matched = sum((cand & max_ref).values())
        if matched == 0:
            if smoothing == "none":
                return 0.0
            zero_orders += 1
            precision = 1.0 / (2**zero_orders * total)
        else:
            precision = matched / total
        log_sum += math.log(precision)
        orders += 1
    c = len(candidate)
    r = min((len(ref) for ref in references), key=lambda length: (abs(length - c), length))
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * math.exp(log_sum / orders)


def levenshtein(a: Sequence[str], b: Sequence[str], limit: int | None = None) -> int:
    """Edit distance between two sequences (of characters, graphemes or tokens). With ``limit``,
    any distance above it is reported as ``limit + 1`` and only a band of width ``2·limit + 1``
    is computed (Ukkonen), so long texts with a small threshold stay fast."""
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    a, b = a[prefix:], b[prefix:]
    suffix = 0
    while suffix < min(len(a), len(b)) and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    a, b = a[: len(a) - suffix], b[: len(b) - suffix]
    if len(a) < len(b):
        a, b = b, a
    k = len(a) if limit is None else limit
    big = k + 1
    if len(a) - len(b) > k:
        return big
    previous = [j if j <= k else big for j in range(len(b) + 1)]
    current = [big] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        lo, hi = max(1, i - k), min(len(b), i + k)
        current[lo - 1] = i if lo == 1 and i <= k else big
        x = a[i - 1]
        for j in range(lo, hi + 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != b[j - 1]), big)
        if min(current[lo - 1 : hi + 1]) >= big:
            return big
        previous, current = current, previous
    return previous[len(b)]
