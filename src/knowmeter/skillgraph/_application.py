"""What an ``application`` case asks, so it is graded by criteria that fit it (not C8's checklist).

Skill Graph's eval files tag ``dimension: application`` on two kinds of prompt: *ownership*
("which skill owns …", routing a task between siblings — most of today's cases) and *scenario*
(apply the skill's rules to a described situation, without an artifact to review). Neither is
C8's "apply ≥ 3 Verification checklist items to the artifact"; a case tagged
``comprehension_dimension: C8`` (research R1: an artifact is given) stays C8.
"""

from __future__ import annotations

import re
from typing import Literal

from knowmeter.skillgraph._cases import ComprehensionCase
from knowmeter.skillgraph._dimension import DO_NOT_USE_SECTION
from knowmeter.skillgraph._skill import Skill

ApplicationKind = Literal["ownership", "scenario"]
_OWNERSHIP = re.compile(
    r"\b(?:which|what)\s+(?:other\s+|sibling\s+)?(?:skill|sibling)s?\b"
    r"|\bskills?\s+(?:that\s+|which\s+)?owns?\b|\bowner\s+skill\b|\bown(?:s|ed)?\s+(?:this|that|the)\s+(?:task|request|work)\b"
    r"|\brout(?:e|es|ed|ing)\b|\bhand-?off\b|\bhand(?:s|ed|ing)?\s+(?:it\s+|this\s+|that\s+|the\s+\w+\s+)?off\b|\bbelongs?\s+(?:to|with)\s+(?:this|another|a\s+different)\s+skill\b",
    re.IGNORECASE,
)


def application_kind(case: ComprehensionCase) -> ApplicationKind | None:
    """``ownership`` / ``scenario`` for a case tagged ``dimension: application`` (and not an
    explicit ``comprehension_dimension``); ``None`` for every other case."""
    if case.dimension_source != "dimension" or (case.legacy_dimension or "").strip() != "application":
        return None
    return "ownership" if _OWNERSHIP.search(case.prompt) else "scenario"


#: the relation kinds that hand a task to (or keep it from) a sibling
_OWNER_RELATIONS = ("suppresses", "boundary", "related", "verify_with", "disjoint_with")
SCENARIO_POINTER = "(a scenario case: no single field is its answer key — the rules of the skill body govern it)"


def application_text(skill: Skill, kind: ApplicationKind) -> tuple[str, str | None]:
    """What an application case is graded against, and its name: for ``ownership`` the
    ``## Do NOT Use When`` section and the skill's relations (None when it has neither); for
    ``scenario`` the whole body (the grader already sees it: a pointer stands in the field)."""
    if kind == "scenario":
        return "the skill body", SCENARIO_POINTER
    parts = []
    sec = skill.section(DO_NOT_USE_SECTION)
    if sec is not None and sec.text.strip():
        parts.append(sec.text.strip())
    relations = skill.frontmatter.get("relations")
    for name in _OWNER_RELATIONS:
        items = relations.get(name) if isinstance(relations, dict) else None
        for item in items if isinstance(items, list) else []:
            target = item.get("skill") if isinstance(item, dict) else item
            reason = item.get("reason") if isinstance(item, dict) else None
            if isinstance(target, str):
                parts.append(f"relations.{name}: {target}" + (f" — {reason}" if isinstance(reason, str) else ""))
    return f"## {DO_NOT_USE_SECTION} + relations", "\n".join(parts) or None
