"""From the skill author's files to graded cases: the SKILL.md and its eval file (read by
``knowmeter.skillgraph``), checked against each other, turned into ``GraderCase`` objects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from knowmeter.comprehension._case import GraderCase, make_case
from knowmeter.comprehension._criteria import Behavior, rubric
from knowmeter.errors import InputError
from knowmeter.skillgraph import (
    ApplicationKind,
    CaseFile,
    ComprehensionCase,
    Dimension,
    Skill,
    application_kind,
    application_text,
    eval_folders,
    find_case_files,
    load_cases,
    load_skill,
)


@dataclass(frozen=True, slots=True)
class Inputs:
    """The skill, its eval file, the cases to grade and notes on cases left out."""

    skill: Skill
    case_file: CaseFile
    cases: tuple[GraderCase, ...]
    notes: tuple[str, ...]


def _behaviors(case: ComprehensionCase, dimension: str, application: str | None) -> tuple[Behavior, ...]:
    """The file's expected behaviors (``expected_behaviors`` / ``expectations``); for a
    ``comprehension.json`` case without them, the rubric's criteria plus its ``expected_elements``
    (positive) and ``negative_expectation`` (negative); else nothing (the rubric's, derived)."""
    given = tuple(Behavior(b.id, b.kind, b.text) for b in case.expected_behaviors)
    if given:
        return given
    extra = tuple(
        Behavior(f"expected_element_{i}", "positive", text) for i, text in enumerate(case.expected_elements, 1)
    )
    if case.negative_expectation:
        extra += (Behavior("negative_expectation", "negative", case.negative_expectation),)
    return (*rubric(dimension, application), *extra) if extra else ()


def load_inputs(skill_path: Path, evals: Path | None, *, n: int) -> Inputs:
    """Load and cross-check the skill and its eval file (found beside the skill when not given).
    ``InputError`` (one line: file, case, fix) for anything that cannot be graded as written."""
    skill = load_skill(skill_path)
    unread = [f for f in skill.blank_fields if skill.concept_text(f) is None]
    if unread:  # an export that lost these fields and has no body section to read them from
        raise InputError(f"{skill.path}: {skill.marketplace_reason}")
    if evals is None:
        found = find_case_files(skill)
        if not found:
            looked = ", ".join(f"{folder}/" for folder in eval_folders(skill))
            raise InputError(
                f"{skill.path}: no eval file found for skill {skill.name!r} (looked in {looked}): nothing to "
                "measure — Skill Graph's comprehension_verdict NA (--write-state records it); pass --evals"
            )
        evals = found[0]
    case_file = load_cases(evals)
    if case_file.skill_name != skill.name:
        line = f":{case_file.skill_name_line}" if case_file.skill_name_line else ""
        raise InputError(
            f"{case_file.path}{line}: skill_name {case_file.skill_name!r} is not the skill "
            f"{skill.name!r} of {skill.path}; pass the eval file of this skill"
        )
    cases, notes = [], []
    for c in case_file.cases:
        application: ApplicationKind | None
        if c.dimension is None and c.format == "evals-json":  # the A/B format: a task and its expectations
            dim, application = Dimension.C8.value, "scenario"
        elif c.dimension is None:
            notes.append(
                f"case {c.id}: no comprehension dimension (no comprehension_dimension and no dimension "
                "that maps to C1–C9): not graded"
            )
            continue
        else:
            dim, application = c.dimension.value, application_kind(c)
        field = c.concept_field or (c.dimension.concept_field if c.dimension else None)
        anchor: str | None
        if application is not None:  # an ownership / scenario case: not C8's Verification checklist
            anchor, text = application_text(skill, application)
        elif field is not None:
            anchor, text = field, skill.concept_text(field)
        else:
            anchor, text = None, skill.grading_text(Dimension(dim))
        if text is None:
            notes.append(
                f"case {c.id} ({dim}): the skill has no {anchor or '## ' + str(Dimension(dim).section)} "
                "text; the grader sees an empty concept field"
            )
        cases.append(
            make_case(
                case_id=c.id,
                dimension=dim,
                prompt=c.prompt,
                concept_text=text or "",
                body=skill.body,
                behaviors=_behaviors(c, dim, application),
                concept_name=anchor,
                expected_reasoning=c.expected_reasoning,
                transfer=c.transfer,
                n=n,
                application=application,
            )
        )
    if not cases:
        raise InputError(f"{case_file.path}: no case with a comprehension dimension (C1–C9) to grade")
    return Inputs(skill, case_file, tuple(cases), tuple(notes))
