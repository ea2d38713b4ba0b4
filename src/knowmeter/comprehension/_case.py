"""What the grader needs of one eval case: the case, its dimension's canonical text, the skill
body, its behaviors, and the verbatim check's source n-grams (computed once per case)."""

from __future__ import annotations

from dataclasses import dataclass, field

from knowmeter import defaults
from knowmeter.comprehension._criteria import Behavior, case_behaviors
from knowmeter.skillgraph import Dimension, Overlap, SourceGrams


@dataclass(frozen=True, slots=True)
class GraderCase:
    """One comprehension case ready to grade.

    ``concept_text`` is the canonical answer for the dimension (the concept field for C1–C7, the
    ``## Verification`` / ``## Do NOT Use When`` section for C8 / C9); ``body`` is SKILL.md without
    its frontmatter. ``behaviors`` are the file's, or the rubric's four criteria (``derived``).
    """

    case_id: str
    dimension: str
    concept_name: str
    prompt: str
    concept_text: str
    body: str
    behaviors: tuple[Behavior, ...]
    verbatim_behavior: str | None
    expected_reasoning: str | None = None
    transfer: str | None = None
    n: int = defaults.VERBATIM_NGRAM
    application: str | None = None
    _grams: SourceGrams | None = field(default=None, compare=False, repr=False)

    def overlap(self, answer: str) -> Overlap:
        """The verbatim check of ``answer`` against the body and the concept field."""
        grams = self._grams
        if grams is None:
            grams = SourceGrams((self.body, self.concept_text), self.n)
            object.__setattr__(self, "_grams", grams)
        return grams.check(answer)

    def describe(self) -> dict[str, object]:
        """The case as recorded with each result."""
        return {
            "case_id": self.case_id,
            "dimension": self.dimension,
            "concept_field": self.concept_name,
            "transfer": self.transfer,
            "behaviors": [b.to_dict() for b in self.behaviors],
            "derived_behaviors": [b.id for b in self.behaviors if b.derived],
            "verbatim_behavior": self.verbatim_behavior,
            "application": self.application,
        }


def make_case(
    *,
    case_id: str,
    dimension: str,
    prompt: str,
    concept_text: str,
    body: str,
    behaviors: tuple[Behavior, ...],
    concept_name: str | None = None,
    expected_reasoning: str | None = None,
    transfer: str | None = None,
    n: int = defaults.VERBATIM_NGRAM,
    application: str | None = None,
) -> GraderCase:
    """A case with its graded behaviors settled (rubric criteria when none are given; C1 always
    has a verbatim behavior; an ``application`` case its kind's criteria); ``concept_name``
    defaults to the dimension's field or section."""
    dim = Dimension(dimension)  # a ValueError for anything but C1…C9
    graded, verbatim = case_behaviors(dimension, behaviors, application)
    name = concept_name or dim.concept_field or f"## {dim.section}"
    return GraderCase(
        case_id,
        dimension,
        name,
        prompt,
        concept_text,
        body,
        graded,
        verbatim,
        expected_reasoning,
        transfer,
        n,
        application,
    )
