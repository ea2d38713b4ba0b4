"""Finding a skill's eval files and an eval file's skill, by the layouts Skill Graph uses. Both
look beside the skill library first (the folder holding ``skills/``, ``evals/``,
``examples/evals/``), then at the repository root when the library lies below it."""

from __future__ import annotations

import json
from pathlib import Path

from knowmeter.skillgraph._cases import CaseFile
from knowmeter.skillgraph._paths import find_library_root
from knowmeter.skillgraph._skill import Skill


def find_skill_file(cases: CaseFile) -> Path | None:
    """The SKILL.md an eval file is for: ``skills/<name>/evals/*.json`` → ``skills/<name>/SKILL.md``
    (Skill Graph's ``dirname(dirname(evalFile))``); ``examples/evals/<skill>.json`` →
    ``skills/<skill_name>/SKILL.md`` or ``skills/<shelf>/<skill_name>/SKILL.md`` in one of
    :func:`skill_folders`. ``None`` when there is none."""
    if cases.format != "examples-evals" and cases.path.parent.name == "evals":
        beside = cases.path.parent.parent / "SKILL.md"
        return beside if beside.is_file() else None
    for skills in skill_folders(cases):
        direct = skills / cases.skill_name / "SKILL.md"
        if direct.is_file():
            return direct
        nested = sorted(skills.glob(f"*/{cases.skill_name}/SKILL.md")) if skills.is_dir() else []
        if nested:
            return nested[0]
    return None


def skill_folders(cases: CaseFile) -> list[Path]:
    """The ``skills/`` folders an ``examples/evals`` file's skill is looked for in, nearest first."""
    return [root / "skills" for root in _roots(cases.path, cases.repo_root)]


def find_case_files(skill: Skill) -> list[Path]:
    """The eval files of ``skill`` (what lint checks and ``comprehend`` grades without
    ``--evals``): by file name — ``<skill>/evals/comprehension.json``, ``<skill>/evals/evals.json``,
    ``<name>.json`` in each of :func:`eval_folders` — else every eval file in those folders whose
    ``skill_name`` is the skill's name. Empty when there is none."""
    folders = eval_folders(skill)
    here = folders[0]
    by_name = [here / "comprehension.json", here / "evals.json", *(f / f"{skill.name}.json" for f in folders)]
    found = [p for p in by_name if p.is_file()]
    if found:
        return found
    return [
        p
        for folder in folders
        for p in (sorted(folder.glob("*.json")) if folder.is_dir() else [])
        if _names_skill(p, skill.name)
    ]


def eval_folders(skill: Skill) -> list[Path]:
    """Where ``skill``'s eval files are looked for, in order: ``<skill>/evals/``, then
    ``examples/evals/`` and ``evals/`` beside its ``skills/`` folder and at the repository root
    (each once: a skill outside any layout is its own repository root)."""
    roots = _roots(skill.path, skill.repo_root)
    here = skill.path.resolve().parent / "evals"
    return list(dict.fromkeys([here, *(folder for r in roots for folder in (r / "examples" / "evals", r / "evals"))]))


def _roots(path: Path, repo_root: Path) -> list[Path]:
    """The library root of ``path`` when it lies inside the repository, then the repository root."""
    library = find_library_root(path)
    if library is None or library == repo_root or not library.is_relative_to(repo_root):
        return [repo_root]
    return [library, repo_root]


def _names_skill(path: Path, name: str) -> bool:
    """An eval file (an ``evals`` list, so not a routing file or sidecar) whose ``skill_name`` is ``name``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return False  # a broken eval file is reported when it is linted itself
    return isinstance(data, dict) and data.get("skill_name") == name and isinstance(data.get("evals"), list)
