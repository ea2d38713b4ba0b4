"""``knowmeter skill lint``: the checks Skill Graph had and deleted, plus the research's.

Each rule has an id, a severity and one line of meaning in :data:`RULES`. Skill Graph's own
checks (``FORMATS.md`` §1.4, §2.1; deleted from its lint on 2026-05-19): ``skill-name``,
``eval-artifacts``, ``eval-state``, ``comprehension-understanding``, ``required-section``,
``empty-section``, ``name-folder``, ``truth-source-file`` / ``-range`` / ``-anchor``. Plus the
holes the field notes found: ``truth-source-drift`` (type-safety.json cites the pre-R1 line
numbers), ``grading-source``, ``concept-field`` and ``marketplace-export``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from knowmeter.skillgraph._cases import CaseFile, ComprehensionCase, load_cases
from knowmeter.skillgraph._dimension import CONCEPT_FIELDS
from knowmeter.skillgraph._errors import SkillFormatError
from knowmeter.skillgraph._locate import find_case_files, find_skill_file
from knowmeter.skillgraph._skill import UNDERSTANDING_FIELDS, Skill, load_skill
from knowmeter.skillgraph._truth import resolve_truth_source

Severity = Literal["error", "warning"]
_MIN_SECTION_CHARS = 50  # Skill Graph warned below 50 non-whitespace characters

#: rule id → (severity, what it checks)
RULES: dict[str, tuple[Severity, str]] = {
    "comprehension-understanding": ("error", "comprehension_state: present but understanding fields are missing"),
    "required-section": ("error", "a body section the skill's shape / type requires is missing or misplaced"),
    "empty-section": ("warning", "a body section has under 50 non-whitespace characters"),
    "eval-artifacts": ("error", "eval_artifacts: present but no eval file names the skill"),
    "eval-state": ("error", "eval_state passing/monitored without eval_artifacts: present"),
    "name-folder": ("warning", "the skill's folder is not named after its 'name'"),
    "marketplace-export": ("warning", "understanding fields are the literal '|' of a marketplace export"),
    "skill-not-found": ("warning", "no SKILL.md found for an eval file; skill checks skipped"),
    "skill-name": ("error", "the eval file's skill_name is not the skill's name"),
    "truth-source-file": ("error", "a truth source cites a file that does not exist"),
    "truth-source-range": ("error", "a truth source's line range runs past the end of the file"),
    "truth-source-anchor": ("error", "a truth source cites a heading anchor the file does not have"),
    "truth-source-drift": ("warning", "a cited line range straddles the section an anchor beside it names"),
    "grading-source": ("warning", "the skill has nothing for the case's dimension to grade against"),
    "concept-field": ("warning", "concept_field is not the one the case's dimension grades"),
}

# FORMATS.md §1.4: required H2 sections per era and archetype
_V4_SECTIONS = {
    "capability": ("Coverage", "Philosophy", "Verification", "Do NOT Use When"),
    "workflow": ("Coverage", "Philosophy", "Verification", "Do NOT Use When", "Workflow"),
    "router": ("Coverage", "Routing Rules", "Do NOT Use When"),
    "overlay": ("Coverage", "Overlay Rules", "Extends", "Do NOT Use When"),
}
_V8_SECTIONS = ("Concept of the skill", "Coverage", "Philosophy of the skill", "Verification", "Do NOT Use When")


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint finding: where (file, 1-based line when known, case id), which rule, how bad, what."""

    path: Path
    line: int | None
    rule: str
    message: str
    case_id: str | None = None

    @property
    def severity(self) -> Severity:
        return RULES[self.rule][0]

    def render(self, base: Path | None = None) -> str:
        """``file:line: severity [rule] message`` — one line; the file relative to ``base`` when
        it lies under it."""
        path = self.path
        if base is not None and path.is_absolute() and path.is_relative_to(base):
            path = path.relative_to(base)
        where = f"{path}:{self.line}" if self.line is not None else str(path)
        case = f"case {self.case_id}: " if self.case_id is not None else ""
        return f"{where}: {self.severity} [{self.rule}] {case}{self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": str(self.path), "line": self.line, "rule": self.rule, "severity": self.severity,
                "case_id": self.case_id, "message": self.message}


@dataclass(slots=True)
class LintResult:
    """Findings over every file linted, the files read, and the files that could not be read."""

    findings: list[Finding] = field(default_factory=list)
    skills: list[Path] = field(default_factory=list)
    eval_files: list[Path] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)


# ----------------------------------------------------------------------------- skills


def lint_skill(skill: Skill) -> list[Finding]:
    """The SKILL.md's own checks (frontmatter, sections, sidecar, eval artifacts)."""
    out: list[Finding] = []
    if skill.path.name == "SKILL.md" and skill.path.parent.name != skill.name:
        out.append(Finding(skill.path, skill.key_lines.get("name"), "name-folder",
                           f"folder {skill.path.parent.name!r} but name {skill.name!r}; rename one to match"))
    if skill.marketplace_export:
        out.append(Finding(skill.path, 1, "marketplace-export", str(skill.marketplace_reason)))
    out += _understanding(skill)
    out += _sections(skill)
    out += _eval_bookkeeping(skill)
    return out


def _state_source(skill: Skill, key: str) -> tuple[Any, Path, int | None]:
    """Value of a bookkeeping key, from the frontmatter or (v8) the sidecar, with its location."""
    if key in skill.frontmatter:
        return skill.frontmatter[key], skill.path, skill.key_lines.get(key)
    if skill.audit_state is not None and skill.audit_state_path is not None and key in skill.audit_state:
        return skill.audit_state[key], skill.audit_state_path, _json_key_line(skill.audit_state_path, key)
    return None, skill.path, None


def _understanding(skill: Skill) -> list[Finding]:
    state, where, line = _state_source(skill, "comprehension_state")
    if state != "present":
        return []
    wanted = CONCEPT_FIELDS if skill.shape == "v4" else UNDERSTANDING_FIELDS  # v4's concept block has all 7
    missing = [f for f in wanted if skill.concept_text(f) is None]
    if not missing:
        return []
    how = "the concept: block" if skill.shape == "v4" else "top-level fields"
    return [Finding(where, line, "comprehension-understanding",
                    f"comprehension_state: present but {', '.join(missing)} missing; add them as {how} "
                    "or set comprehension_state: absent")]


def _sections(skill: Skill) -> list[Finding]:
    top = [s for s in skill.sections if s.level == 2]
    titles = [s.title.lower() for s in top]
    out: list[Finding] = []
    if skill.shape == "v8":
        required: tuple[str, ...] = _V8_SECTIONS
        if titles and "concept of the skill" in titles and titles[0] != "concept of the skill":
            out.append(Finding(skill.path, top[0].line, "required-section",
                               "'## Concept of the skill' must be the first section (v8)"))
    else:
        kind = skill.frontmatter.get("type", skill.frontmatter.get("archetype", "capability"))
        required = _V4_SECTIONS.get(str(kind), _V4_SECTIONS["capability"])
        artifacts, _, _ = _state_source(skill, "eval_artifacts")
        if artifacts == "present":
            required = (*required, "Evals")
    for title in required:
        if title.lower() not in titles:
            out.append(Finding(skill.path, skill.body_line, "required-section",
                               f"missing '## {title}' ({skill.shape} {'skill' if skill.shape == 'v8' else 'type'} "
                               "requires it); add the section"))
    for sec in top:
        if sec.title.lower() in {t.lower() for t in required} and len("".join(sec.text.split())) < _MIN_SECTION_CHARS:
            out.append(Finding(skill.path, sec.line, "empty-section",
                               f"'## {sec.title}' has under {_MIN_SECTION_CHARS} non-whitespace characters"))
    return out


def _eval_bookkeeping(skill: Skill) -> list[Finding]:
    out: list[Finding] = []
    artifacts, where, line = _state_source(skill, "eval_artifacts")
    state, s_where, s_line = _state_source(skill, "eval_state")
    if state in ("passing", "monitored") and artifacts != "present":
        out.append(Finding(s_where, s_line, "eval-state",
                           f"eval_state: {state} needs eval_artifacts: present (got {artifacts!r})"))
    if artifacts == "present" and not _eval_files_naming(skill):
        out.append(Finding(where, line, "eval-artifacts",
                           f"eval_artifacts: present but no eval file has skill_name {skill.name!r} (looked in "
                           "<skill>/evals/, examples/evals/, evals/); add one or set eval_artifacts: planned"))
    return out


def _eval_files_naming(skill: Skill) -> list[Path]:
    by_name = find_case_files(skill)
    if by_name:
        return by_name
    folders = [skill.path.parent / "evals", skill.repo_root / "examples" / "evals", skill.repo_root / "evals"]
    found = []
    for folder in folders:
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # a broken eval file is reported when it is linted itself
            if isinstance(data, dict) and data.get("skill_name") == skill.name:
                found.append(path)
    return found


def _json_key_line(path: Path, key: str) -> int | None:
    text = path.read_text(encoding="utf-8")
    at = text.find(f'"{key}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else None


# ----------------------------------------------------------------------------- eval files


def lint_cases(cases: CaseFile, skill: Skill | None) -> list[Finding]:
    """An eval file's checks; those that need the skill are skipped (with a warning) without one."""
    out: list[Finding] = []
    for case in cases.cases:
        out += _truth_sources(cases, case)
    if skill is None:
        where = (cases.repo_root / "skills" if cases.format == "examples-evals"
                 else cases.path.parent.parent / "SKILL.md")
        out.append(Finding(cases.path, cases.skill_name_line, "skill-not-found",
                           f"no SKILL.md for skill_name {cases.skill_name!r} (looked in {where}); "
                           f"name it: knowmeter skill lint path/to/SKILL.md {cases.path}"))
        return out
    if cases.skill_name != skill.name:
        out.append(Finding(cases.path, cases.skill_name_line, "skill-name",
                           f"skill_name {cases.skill_name!r} but {skill.path} is named {skill.name!r}; "
                           "fix skill_name or pair the file with its own skill"))
        return out
    missing: dict[str, list[ComprehensionCase]] = {}
    for case in cases.cases:
        out += _concept_field(cases, case)
        gap = _missing_source(case, skill)
        if gap is not None:
            missing.setdefault(gap, []).append(case)
    for gap, group in missing.items():
        ids = ", ".join(c.id for c in group)
        why = f" ({skill.marketplace_reason})" if skill.marketplace_export else ""
        out.append(Finding(cases.path, group[0].line, "grading-source",
                           f"case{'s' if len(group) > 1 else ''} {ids}: {gap}, which {skill.path.name} does not "
                           f"have{why}; the grader will see only the body and the truth sources"))
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
            out.append(Finding(cases.path, case.line, "truth-source-drift",
                               f"{r.source.raw} straddles #{a.source.anchor} (lines {lo}-{hi}) cited beside it; "
                               "the line numbers have drifted — re-cite the range", case.id))
    return out


def _concept_field(cases: CaseFile, case: ComprehensionCase) -> list[Finding]:
    dim = case.dimension
    if dim is None or dim.concept_field is None or case.concept_field in (None, dim.concept_field):
        return []
    return [Finding(cases.path, case.line, "concept-field",
                    f"{dim.value} grades concept field {dim.concept_field!r} but the case says "
                    f"{case.concept_field!r}", case.id)]


def _missing_source(case: ComprehensionCase, skill: Skill) -> str | None:
    """What the case's dimension grades against, when the skill lacks it."""
    dim = case.dimension
    if dim is None:
        return None
    if dim.concept_field is not None:
        name = case.concept_field or dim.concept_field
        return None if skill.concept_text(name) is not None else f"{dim.value} grades concept field {name!r}"
    return None if skill.grading_text(dim) is not None else f"{dim.value} grades the '## {dim.section}' section"


# ----------------------------------------------------------------------------- paths


def lint_paths(paths: Iterable[Path]) -> LintResult:
    """Lint SKILL.md files, skill folders, eval files and folders holding them. A SKILL.md pulls
    in its eval files and is the skill they are checked against; any other eval file is checked
    against the SKILL.md its layout names, else the one SKILL.md given. Unreadable input is
    collected in ``unreadable``, not raised."""
    result = LintResult()
    skill_paths, eval_paths = _collect(list(paths), result)
    pairs: dict[Path, tuple[Path, Skill | None]] = {p.resolve(): (p, None) for p in eval_paths}
    given: list[Skill] = []
    for path in skill_paths:
        try:
            skill = load_skill(path)
        except SkillFormatError as exc:
            result.unreadable.append(str(exc))
            continue
        given.append(skill)
        result.skills.append(path)
        result.findings += lint_skill(skill)
        for own in find_case_files(skill):
            pairs[own.resolve()] = (pairs.get(own.resolve(), (own, None))[0], skill)
    loaded = {s.path.resolve(): s for s in given}
    for path, paired in pairs.values():
        try:
            cases = load_cases(path)
            if paired is None:
                found = find_skill_file(cases)
                if found is not None:
                    paired = loaded.get(found.resolve()) or load_skill(found)
                elif len(given) == 1:
                    paired = given[0]
        except SkillFormatError as exc:
            result.unreadable.append(str(exc))
            continue
        result.eval_files.append(path)
        result.findings += lint_cases(cases, paired)
    return result


def _collect(paths: list[Path], result: LintResult) -> tuple[list[Path], list[Path]]:
    skills: list[Path] = []
    evals: list[Path] = []
    for path in paths:
        if path.is_dir():
            if (path / "SKILL.md").is_file():
                skills.append(path / "SKILL.md")
                continue
            skills += sorted(path.rglob("SKILL.md"))
            evals += [p for p in sorted(path.rglob("*.json")) if _looks_like_eval_file(p)]
        elif not path.exists():
            result.unreadable.append(f"{path}: no such file or folder")
        elif path.suffix.lower() == ".md":
            skills.append(path)
        elif path.suffix.lower() == ".json" and path.name != "audit-state.json":
            evals.append(path)
        else:
            result.unreadable.append(f"{path}: not a SKILL.md, skill folder or eval .json file")
    unique = {p.resolve(): p for p in reversed(evals)}
    return skills, [p for p in evals if unique.get(p.resolve()) is p]


def _looks_like_eval_file(path: Path) -> bool:
    """Eval files under a folder: ``*/evals/*.json`` except routing artifacts and sidecars."""
    return path.parent.name == "evals" and not path.name.endswith(".routing.json") and path.name != "audit-state.json"
