"""Finding a skill's eval files and an eval file's skill, by the layouts Skill Graph uses."""

from __future__ import annotations

from pathlib import Path

from knowmeter.skillgraph._cases import CaseFile
from knowmeter.skillgraph._skill import Skill


def find_skill_file(cases: CaseFile) -> Path | None:
    """The SKILL.md an eval file is for: ``skills/<name>/evals/*.json`` → ``skills/<name>/SKILL.md``
    (Skill Graph's ``dirname(dirname(evalFile))``); ``examples/evals/<skill>.json`` →
    ``<repo>/skills/<skill_name>/SKILL.md`` or ``<repo>/skills/<shelf>/<skill_name>/SKILL.md``.
    ``None`` when there is none."""
    if cases.format != "examples-evals" and cases.path.parent.name == "evals":
        beside = cases.path.parent.parent / "SKILL.md"
        return beside if beside.is_file() else None
    skills = cases.repo_root / "skills"
    direct = skills / cases.skill_name / "SKILL.md"
    if direct.is_file():
        return direct
    nested = sorted(skills.glob(f"*/{cases.skill_name}/SKILL.md")) if skills.is_dir() else []
    return nested[0] if nested else None


def find_case_files(skill: Skill) -> list[Path]:
    """The eval files that exist for ``skill`` by name: ``<skill>/evals/comprehension.json``,
    ``<skill>/evals/evals.json``, ``<repo>/examples/evals/<name>.json``, ``<repo>/evals/<name>.json``."""
    here = skill.path.parent / "evals"
    candidates = [
        here / "comprehension.json",
        here / "evals.json",
        skill.repo_root / "examples" / "evals" / f"{skill.name}.json",
        skill.repo_root / "evals" / f"{skill.name}.json",
    ]
    return [p for p in candidates if p.is_file()]
