"""The four pass criteria of each rubric dimension (research §5.2–5.10), which become a case's
behaviors when its eval file lists none, and the verbatim behavior every C1 case has; and the
criteria of Skill Graph's ``application`` cases (``knowmeter.skillgraph.application_kind``):
an *ownership* case is passed by naming the skill that owns the task and why, a *scenario* case
by applying the skill's governing rule to the scenario — not by C8's checklist items applied to
an artifact the prompt does not have."""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowmeter.skillgraph import BehaviorKind as Kind


@dataclass(frozen=True, slots=True)
class Behavior:
    """One expected behavior; ``derived`` when it came from the rubric, not the eval file."""

    id: str
    kind: Kind
    description: str
    derived: bool = False

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "kind": self.kind, "description": self.description, "derived": self.derived}


def _b(bid: str, kind: Kind, text: str) -> Behavior:
    return Behavior(bid, kind, text, derived=True)


VERBATIM_BEHAVIOR = _b(
    "no_verbatim_span",
    "negative",
    "No span of 6 or more consecutive content words shared with the skill body or the "
    "concept field (the answer restates; it does not retrieve).",
)

#: §5.2–5.10, the four binary pass criteria of each dimension, as behaviors.
RUBRIC_CRITERIA: dict[str, tuple[Behavior, ...]] = {
    "C1": (
        _b("names_primary_category", "positive", "Names the same primary category as the concept's definition."),
        _b(
            "states_observable_effect",
            "positive",
            "States what the concept does (its observable effect) in different surface words.",
        ),
        VERBATIM_BEHAVIOR,
        _b(
            "no_fabricated_specificity",
            "negative",
            "Does not introduce constraints or claims that are not in the definition.",
        ),
    ),
    "C2": (
        _b("names_two_primitives", "positive", "Names at least two of the primitives listed in the mental model."),
        _b(
            "applies_primitives_to_case",
            "positive",
            "Applies the primitives to the new case's specifics, not just restating what each means.",
        ),
        _b("conclusion_consistent", "positive", "Reaches a conclusion consistent with the skill's mental model."),
        _b(
            "no_reliance_on_body_scenario",
            "negative",
            "Does not depend on the body enumerating this scenario: the reasoning transfers to the new case.",
        ),
    ),
    "C3": (
        _b("names_pain_point", "positive", "Names the concrete pain point that motivated the concept."),
        _b("names_prior_alternative", "positive", "Names the prior alternative (what people did before)."),
        _b(
            "explains_improvement_mechanism",
            "positive",
            "Explains the mechanism by which the concept improves on the alternative, not just that it does.",
        ),
        _b("no_fabricated_purpose", "negative", "Does not introduce purposes that are not in the concept's purpose."),
    ),
    "C4": (
        _b("identifies_out_of_domain", "positive", "Identifies that the scenario is not in this skill's domain."),
        _b(
            "names_correct_sibling",
            "positive",
            "Names the correct sibling skill (a boundary entry or a Do NOT Use When row).",
        ),
        _b(
            "explains_mechanism_of_difference",
            "positive",
            "Explains the mechanism of the difference (different primitives, scope or layer).",
        ),
        _b("no_partial_comply", "negative", "Does not give a half-answer in this skill's voice before handing off."),
    ),
    "C5": (
        _b(
            "places_in_right_category",
            "positive",
            "Places the novel instance in the right taxonomy category, or says it fits none.",
        ),
        _b(
            "uses_taxonomy_vocabulary",
            "positive",
            "Uses the taxonomy vocabulary (subset / alternative / prerequisite / composition / specialization).",
        ),
        _b(
            "consistent_with_existing_entries",
            "positive",
            "The placement does not contradict the relationships among the existing taxonomy entries.",
        ),
        _b(
            "no_forced_misclassification",
            "negative",
            "Does not force a misclassification when the instance does not fit.",
        ),
    ),
    "C6": (
        _b(
            "extends_analogy_preserving_structure",
            "positive",
            "Extends the analogy to the new case preserving the structural relationships it names.",
        ),
        _b(
            "names_concrete_break",
            "positive",
            "Names a concrete case where the analogy fails and explains which relationship breaks.",
        ),
        _b("no_over_application", "negative", "Does not over-apply the analogy beyond its scope."),
        _b("no_under_claim", "negative", "Does not refuse to say where the analogy breaks."),
    ),
    "C7": (
        _b("flags_misconception_unprompted", "positive", "Flags the misconception without being prompted to."),
        _b(
            "corrects_using_primitives",
            "positive",
            "Corrects it to the right understanding using the skill's primitives.",
        ),
        _b(
            "explains_mechanism_of_mislead",
            "positive",
            "Explains the mechanism by which the misconception misleads, not just that it is wrong.",
        ),
        _b("no_partial_validation", "negative", "Does not validate the misconception, even partially."),
    ),
    "C8": (
        _b(
            "applies_three_checklist_items",
            "positive",
            "Applies at least 3 items of the Verification checklist as observable checks on the artifact.",
        ),
        _b(
            "distinguishes_pass_and_fail",
            "positive",
            "Distinguishes the checks the artifact passes from those it fails.",
        ),
        _b(
            "verdict_anchored_to_checklist",
            "positive",
            "Anchors its verdict on the artifact to the Verification criteria.",
        ),
        _b(
            "references_concrete_features",
            "positive",
            "References concrete features of the artifact (lines, names, behaviours), not abstract restatements.",
        ),
    ),
    "C9": (
        _b("refuses_in_skill_voice", "positive", "Refuses to take the task in this skill's voice."),
        _b("names_correct_owner", "positive", "Names the correct owner from the Do NOT Use When table."),
        _b("no_partial_answer", "negative", "Does not give a partial answer in this skill's voice before refusing."),
        _b(
            "no_over_refusal",
            "negative",
            "Does not over-refuse: in-scope parts stay with this skill, adjacent parts go to the owner.",
        ),
    ),
}

#: Criteria of the two kinds of ``application`` case (graded under C8 in the statistics).
APPLICATION_CRITERIA: dict[str, tuple[Behavior, ...]] = {
    "ownership": (
        _b(
            "names_owner_skill",
            "positive",
            "Names the skill that owns the task: this skill, or the sibling its Do NOT Use When table, boundary "
            "or relations give the task to.",
        ),
        _b(
            "explains_why_it_owns",
            "positive",
            "Says why that skill owns it: the scope, layer or boundary that decides, not just the name.",
        ),
        _b(
            "no_wrong_owner",
            "negative",
            "Does not give the task to a skill that does not own it, nor keep it for this skill when a "
            "sibling owns it.",
        ),
        _b(
            "no_work_in_wrong_voice",
            "negative",
            "Does not do the task's work in the voice of a skill that does not own it before handing it off.",
        ),
    ),
    "scenario": (
        _b(
            "identifies_governing_rule",
            "positive",
            "Identifies the rule, section or step of the skill that governs the scenario.",
        ),
        _b(
            "applies_to_specifics",
            "positive",
            "Applies that rule to the scenario's specifics (its names, values, steps), not a generic restatement.",
        ),
        _b("reaches_prescribed_action", "positive", "Reaches the action or fix the skill prescribes for this case."),
        _b("no_invented_rule", "negative", "Does not invent rules, steps or claims the skill does not have."),
    ),
}


def rubric(dimension: str, application: str | None = None) -> tuple[Behavior, ...]:
    """The criteria a case without behaviors is graded on: its application kind's, else its dimension's."""
    return APPLICATION_CRITERIA[application] if application else RUBRIC_CRITERIA[dimension]


#: The skill's text as an object: the skill (SKILL.md), its body, definition or concept field.
_SKILL_TEXT = r"(?:(?:the|its|this)\s+)?(?:skill\.md|skill(?:'s|’s)?|body|definition|concept(?:\s+field|\.\w+)?)"
#: What is copied: its text / wording / …, text / sentences / … from the skill, or the skill itself.
_COPIED = (
    r"(?:(?:its|the)\s+(?:text|wording|words|phrasing|sentences)"
    rf"|(?:text|words|wording|sentences?|phrases?|phrasing|passages?|spans?|lines?)\s+(?:from|of|in)\s+{_SKILL_TEXT}"
    rf"|{_SKILL_TEXT})\b"
)
_COPY = r"(?:cop(?:y|ies|ied|ying)|quot(?:e|es|ed|ing)|reproduc(?:e|es|ed|ing)|repeat(?:s|ed|ing)?)"
#: "verbatim", an n-gram (6-gram, n-gram), or copying / quoting / reproducing the skill's text —
#: not any "quote" or "copy" (a price quote, a quota, copywriting are other behaviors).
_VERBATIM = re.compile(rf"\bverbatim\b|\b(?:\d+|n)-?grams?\b|\b{_COPY}\s+(?:from\s+)?{_COPIED}", re.IGNORECASE)


def is_verbatim_behavior(behavior: Behavior) -> bool:
    """A negative behavior about reproducing the skill's text (its id or description says
    verbatim, an n-gram, or copying / quoting the skill, its body, definition or wording)."""
    return behavior.kind == "negative" and any(
        _VERBATIM.search(text) for text in (behavior.id.replace("_", " "), behavior.description)
    )


def case_behaviors(
    dimension: str, given: tuple[Behavior, ...], application: str | None = None
) -> tuple[tuple[Behavior, ...], str | None]:
    """The behaviors a case is graded on and the id of its verbatim behavior (None if it has none).

    A case without behaviors gets its dimension's four rubric criteria, or its ``application``
    kind's (``derived``). A C1 case
    always has a verbatim behavior (§5.2: a verbatim span is a hard fail): when the file's list has
    none, the rubric's is added, marked derived.
    """
    behaviors = given or rubric(dimension, application)
    verbatim = next((b.id for b in behaviors if is_verbatim_behavior(b)), None)
    if dimension == "C1" and verbatim is None:
        behaviors = (*behaviors, VERBATIM_BEHAVIOR)
        verbatim = VERBATIM_BEHAVIOR.id
    return behaviors, verbatim
