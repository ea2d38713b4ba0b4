"""``knowmeter skill lint`` over paths: the checks Skill Graph had and deleted, plus the research's.

Each rule has an id, a severity and one line of meaning in :data:`RULES`. Skill Graph's own
checks (``FORMATS.md`` §1.4, §2.1; deleted from its lint on 2026-05-19): ``skill-name``,
``eval-artifacts``, ``eval-state``, ``comprehension-understanding``, ``required-section``,
``empty-section``, ``name-folder``, ``truth-source-file`` / ``-range`` / ``-anchor``. Plus the
holes the field notes found: ``truth-source-drift`` (type-safety.json cites the pre-R1 line
numbers), ``grading-source``, ``concept-field`` and ``marketplace-export``. The research's:
``far-transfer`` (R4), ``c2-scenario`` and ``analogy-drift`` (see ``_lint_text``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from knowmeter.skillgraph._cases import ANCHORS_SUFFIX, ROUTING_SUFFIX, load_cases
from knowmeter.skillgraph._errors import SkillFormatError
from knowmeter.skillgraph._finding import Finding
from knowmeter.skillgraph._lint_cases import lint_cases
from knowmeter.skillgraph._lint_skill import lint_skill
from knowmeter.skillgraph._locate import find_case_files, find_skill_file
from knowmeter.skillgraph._skill import Skill, load_skill


@dataclass(slots=True)
class LintResult:
    """Findings over every file linted, the files read, and the files that could not be read."""

    findings: list[Finding] = field(default_factory=list)
    skills: list[Path] = field(default_factory=list)
    eval_files: list[Path] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    #: ``*.routing.json`` files met: routing evals, named and left to the skill activation evaluation
    routing_files: list[Path] = field(default_factory=list)
    #: ``*.anchors.json`` given by name: comprehend --calibrate's anchors, not checked here
    anchor_files: list[Path] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)


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
            result.routing_files += sorted(path.rglob(f"*{ROUTING_SUFFIX}"))
        elif not path.exists():
            result.unreadable.append(f"{path}: no such file or folder")
        elif path.name.endswith(ROUTING_SUFFIX):
            result.routing_files.append(path)
        elif path.name.endswith(ANCHORS_SUFFIX):
            result.anchor_files.append(path)
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
    return (
        path.parent.name == "evals"
        and not path.name.endswith((ROUTING_SUFFIX, ANCHORS_SUFFIX))
        and path.name != "audit-state.json"
    )
