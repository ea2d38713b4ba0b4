"""Similarity to a reference answer (fact layer): ROUGE-N, BLEU, Levenshtein.

Words are Unicode word tokens (each Han / kana / Thai … character is a token; see ``_unicode``);
Levenshtein counts edits of user-perceived characters. ROUGE and BLEU ignore case by default.
The threshold key is ``value`` (``threshold`` is accepted too, as in omk's RAG metrics).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field, field_validator

from knowmeter.grading._registry import CheckContext, Outcome, SyncAssertion, register
from knowmeter.grading._similarity import Smoothing, bleu, levenshtein, rouge_n
from knowmeter.grading._unicode import fold, graphemes, word_tokens

_THRESHOLD = AliasChoices("value", "threshold")
Ratio = Annotated[float, Field(ge=0, le=1, validation_alias=_THRESHOLD)]


class _AgainstReferences(SyncAssertion):
    reference: str | list[str]
    ignore_case: bool = True

    @field_validator("reference")
    @classmethod
    def _non_empty(cls, v: str | list[str]) -> str | list[str]:
        if not v or (isinstance(v, list) and not all(v)):
            raise ValueError("needs a non-empty reference text (or a list of them)")
        return v

    def references(self) -> list[list[str]]:
        refs = [self.reference] if isinstance(self.reference, str) else self.reference
        return [word_tokens(r, ignore_case=self.ignore_case) for r in refs]

    def candidate(self, ctx: CheckContext) -> list[str]:
        return word_tokens(ctx.output, ignore_case=self.ignore_case)


@register("rouge_n_min")
class RougeNMin(_AgainstReferences):
    value: Ratio
    n: int = Field(default=1, ge=1, le=4)
    measure: Literal["f1", "recall", "precision"] = "f1"

    def check(self, ctx: CheckContext) -> Outcome:
        score = rouge_n(self.candidate(ctx), self.references(), self.n)
        got = getattr(score, self.measure)
        ok = got >= self.value
        return Outcome(
            ok,
            f"ROUGE-{self.n} {self.measure} {got:.3f} ({'>=' if ok else '<'} {self.value})",
            {"precision": score.precision, "recall": score.recall, "f1": score.f1},
        )


@register("bleu_min")
class BleuMin(_AgainstReferences):
    value: Ratio
    max_n: int = Field(default=4, ge=1, le=4)
    smoothing: Smoothing = "exp"

    def check(self, ctx: CheckContext) -> Outcome:
        got = bleu(self.candidate(ctx), self.references(), max_n=self.max_n, smoothing=self.smoothing)
        ok = got >= self.value
        return Outcome(ok, f"BLEU {got:.3f} ({'>=' if ok else '<'} {self.value})", {"bleu": got})


@register("levenshtein_max")
class LevenshteinMax(SyncAssertion):
    reference: str
    value: int = Field(ge=0, validation_alias=_THRESHOLD)
    ignore_case: bool = False

    def check(self, ctx: CheckContext) -> Outcome:
        a = graphemes(fold(ctx.output.strip(), ignore_case=self.ignore_case))
        b = graphemes(fold(self.reference.strip(), ignore_case=self.ignore_case))
        distance = levenshtein(a, b, limit=self.value)
        if distance <= self.value:
            return Outcome(True, f"edit distance {distance} (<= {self.value})", {"distance": distance})
        return Outcome(False, f"edit distance above {self.value}", {"distance_above": self.value})
