"""Checks on one eval file, against its skill when there is one: ``skill_name``, truth sources
(file, line range, anchor, drifted ranges), what each case's dimension grades against, and the
research's transfer checks (``_lint_text``)."""

from __future__ import annotations

from knowmeter.skillgraph._application import application_kind, application_text
from knowmeter.skillgraph._cases import CaseFile, ComprehensionCase
from knowmeter.skillgraph._finding import Finding
from knowmeter.skillgraph._lint_text import transfer_findings
from knowmeter.skillgraph._locate import skill_folders
from knowmeter.skillgraph._skill import Skill
from knowmeter.skillgraph._truth import resolve_truth_source


def lint_cases(cases: CaseFile, skill: Skill | None) -> list[Finding]:
    """An eval file's checks; those that need the skill are skipped (with a warning) without one."""
    out: list[Finding] = []
    for case in cases.cases:
        out += _truth_sources(cases, case)
    if skill is None:
        where = (
            ", ".join(map(str, skill_folders(cases)))
            if cases.format == "examples-evals"
            else cases.path.parent.parent / "SKILL.md"
        )
        out.append(
            Finding(
                cases.path,
                cases.skill_name_line,
                "skill-not-found",
                f"no SKILL.md for skill_name {cases.skill_name!r} (looked in {where}); "
                f"name it: knowmeter skill lint path/to/SKILL.md {cases.path}",
            )
        )
        return out
    if cases.skill_name != skill.name:
        out.append(
            Finding(
                cases.path,
                cases.skill_name_line,
                "skill-name",
                f"skill_name {cases.skill_name!r} but {skill.path} is named {skill.name!r}; "
                "fix skill_name or pair the file with its own skill",
            )
        )
        return out
    missing: dict[str, list[ComprehensionCase]] = {}
    for case in cases.cases:
        out += _concept_field(cases, case)
        out += transfer_findings(cases, case, skill)
        gap = _missing_source(case, skill)
        if gap is not None:
            missing.setdefault(gap, []).append(case)
    for gap, group in missing.items():
        ids = ", ".join(c.id for c in group)
        why = f" ({skill.marketplace_reason})" if skill.marketplace_export else ""
        out.append(
            Finding(
                cases.path,
                group[0].line,
                "grading-source",
                f"case{'s' if len(group) > 1 else ''} {ids}: {gap}, which {skill.path.name} does not "
                f"have{why}; the grader will see only the body and the truth sources",
            )
        )
    return out


def _truth_sources(cases: CaseFile, case: ComprehensionCase) -> list[Finding]:
    out: list[Finding] = []
    resolved = [resolve_truth_source(s, cases.repo_root) for s in case.truth_sources]
    for r in resolved:
        if r.problem is None:
            continue
        if r.line_count is None:
            rule = "truth-source-file"
        elif r.source.anchor is not None:
            rule = "truth-source-anchor"
        else:
            rule = "truth-source-range"
        out.append(Finding(cases.path, case.line, rule, f"{r.source.raw}: {r.problem}", case.id))
    anchored = [(r, r.start, r.end) for r in resolved if r.problem is None and r.source.anchor is not None]
    for r in resolved:
        if r.problem is not None or r.source.start is None:
            continue
        first, last = r.source.start, r.source.end or r.source.start
        same = [(a, lo, hi) for a, lo, hi in anchored if a.file == r.file and lo is not None and hi is not None]
        inside = any(lo <= first and last <= hi for _, lo, hi in same)
        straddled = [(a, lo, hi) for a, lo, hi in same if first <= hi and last >= lo]
        if straddled and not inside:
            a, lo, hi = straddled[0]
            out.append(
                Finding(
                    cases.path,
                    case.line,
                    "truth-source-drift",
                    f"{r.source.raw} straddles #{a.source.anchor} (lines {lo}-{hi}) cited beside it; "
                    "the line numbers have drifted — re-cite the range",
                    case.id,
                )
            )
    return out


def _concept_field(cases: CaseFile, case: ComprehensionCase) -> list[Finding]:
    dim = case.dimension
    if dim is None or dim.concept_field is None or case.concept_field in (None, dim.concept_field):
        return []
    return [
        Finding(
            cases.path,
            case.line,
            "concept-field",
            f"{dim.value} grades concept field {dim.concept_field!r} but the case says {case.concept_field!r}",
            case.id,
        )
    ]


def _missing_source(case: ComprehensionCase, skill: Skill) -> str | None:
    """What the case's dimension grades against, when the skill lacks it."""
    dim = case.dimension
    if dim is None:
        return None
    kind = application_kind(case)
    if kind is not None:  # graded on its own criteria, against what it asks for
        name, text = application_text(skill, kind)
        return None if text is not None else f"an application ({kind}) case grades against {name}"
    if dim.concept_field is not None:
        name = case.concept_field or dim.concept_field
        return None if skill.concept_text(name) is not None else f"{dim.value} grades concept field {name!r}"
    return None if skill.grading_text(dim) is not None else f"{dim.value} grades the '## {dim.section}' section"
