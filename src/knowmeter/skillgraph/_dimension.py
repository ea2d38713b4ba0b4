"""The comprehension rubric's dimensions C1–C9 and the mapping of every eval-file spelling onto
them (research §5.1, §6.1, Appendix D; ``FORMATS.md`` §2.5).

Each dimension grades against one thing in the skill:

======  ===========================  =============================================
C1      Definitional precision       concept field ``definition``
C2      Mental-model fidelity        concept field ``mental_model``
C3      Purpose articulation         concept field ``purpose``
C4      Boundary discrimination      concept field ``boundary``
C5      Taxonomy navigation          concept field ``taxonomy``
C6      Analogy reuse with limit     concept field ``analogy``
C7      Misconception inoculation    concept field ``misconception``
C8      Verification application     body section ``## Verification``
C9      Negative-boundary refusal    body section ``## Do NOT Use When``
======  ===========================  =============================================

The eval formats name a case's dimension in two ways:

* ``comprehension_dimension: "C1"…"C9"`` (the research's extension, ``examples/evals``) — exact.
* ``dimension`` (all formats; the older, coarser vocabulary). :data:`LEGACY_DIMENSIONS` maps
  each spelling: ``definition``→C1, ``mental_model``→C2, ``purpose``→C3, ``boundary``→C4,
  ``taxonomy``→C5, ``analogy``→C6, ``misconception`` and ``anti_pattern``→C7 (type-safety.json
  tags its C7 cases ``anti_pattern``), ``application``→C8 (type-safety.json case 8: applying the
  skill to a fresh artifact), ``rule_conflict``→C2 (documentation cases 11–12: reasoning about
  a situation the skill's rules do not spell out, with its own primitives — a judgment call,
  recorded here). When both keys are present ``comprehension_dimension`` wins (type-safety.json
  tags C5 and C6 cases ``dimension: mental_model``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

#: The seven concept fields of a v4 ``concept:`` block, in schema order.
ConceptField = Literal["definition", "mental_model", "purpose", "boundary", "taxonomy", "analogy", "misconception"]
CONCEPT_FIELDS: tuple[ConceptField, ...] = (
    "definition",
    "mental_model",
    "purpose",
    "boundary",
    "taxonomy",
    "analogy",
    "misconception",
)

#: The body section headings C8 and C9 grade against.
VERIFICATION_SECTION = "Verification"
DO_NOT_USE_SECTION = "Do NOT Use When"


class Dimension(StrEnum):
    """One comprehension dimension, C1…C9; the value is the code (``"C1"``)."""

    C1 = "C1"
    C2 = "C2"
    C3 = "C3"
    C4 = "C4"
    C5 = "C5"
    C6 = "C6"
    C7 = "C7"
    C8 = "C8"
    C9 = "C9"

    @property
    def long_name(self) -> str:
        """The research's canonical name (§5.1), e.g. ``"Definitional precision"``."""
        return _TITLES[self]

    @property
    def concept_field(self) -> ConceptField | None:
        """The concept field this dimension grades against; ``None`` for C8 / C9 (body sections)."""
        return _FIELDS.get(self)

    @property
    def section(self) -> str | None:
        """The body section heading C8 / C9 grade against; ``None`` for C1–C7."""
        return _SECTIONS.get(self)


_TITLES = {
    Dimension.C1: "Definitional precision",
    Dimension.C2: "Mental-model fidelity",
    Dimension.C3: "Purpose articulation",
    Dimension.C4: "Boundary discrimination",
    Dimension.C5: "Taxonomy navigation",
    Dimension.C6: "Analogy reuse with limit",
    Dimension.C7: "Misconception inoculation",
    Dimension.C8: "Verification application",
    Dimension.C9: "Negative-boundary refusal",
}
_FIELDS: dict[Dimension, ConceptField] = dict(zip(Dimension, CONCEPT_FIELDS, strict=False))
_SECTIONS = {Dimension.C8: VERIFICATION_SECTION, Dimension.C9: DO_NOT_USE_SECTION}

#: ``dimension`` spellings of the three eval formats → the rubric dimension (see module doc).
LEGACY_DIMENSIONS: dict[str, Dimension] = {
    "definition": Dimension.C1,
    "mental_model": Dimension.C2,
    "rule_conflict": Dimension.C2,
    "purpose": Dimension.C3,
    "boundary": Dimension.C4,
    "taxonomy": Dimension.C5,
    "analogy": Dimension.C6,
    "misconception": Dimension.C7,
    "anti_pattern": Dimension.C7,
    "application": Dimension.C8,
}

#: Case metadata enums, the union over the formats (``FORMATS.md`` §2.5), with the spellings that
#: mean the same thing folded into one: ``skill_type: workflow`` → ``procedure`` (SKI-244 rename),
#: ``criticality: normal`` → ``medium`` (the application schema's 4-level scale). Values that
#: differ in meaning (``substance: domain`` vs ``concept``) are kept apart.
METADATA_VALUES: dict[str, dict[str, str]] = {
    "substance": {v: v for v in ("domain", "contradiction-check", "concept", "procedure", "boundary")},
    "calibration": {v: v for v in ("semantic", "process", "exact-match", "structural")},
    "truth_mode": {
        v: v
        for v in (
            "conceptual_correctness",
            "conceptual_correctness_plus_repo_application",
            "code_verification",
            "process_correctness",
            "output_correctness",
            "spec_grounded",
            "principle_grounded",
            "repo_implementation",
        )
    },
    "skill_type": {
        "concept": "concept",
        "procedure": "procedure",
        "workflow": "procedure",
        "router": "router",
        "overlay": "overlay",
        "knowledge": "knowledge",
    },
    "criticality": {"critical": "critical", "high": "high", "medium": "medium", "normal": "medium", "low": "low"},
}

Transfer = Literal["near", "far"]
BehaviorKind = Literal["positive", "negative"]
