"""A v8 skill's links out of its own file, checked as Skill Graph's gates check them: every
``relations.*`` target names a skill of the library (its lint), every local
``grounding.truth_sources`` path exists (its drift gate reports the skill BROKEN otherwise)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from knowmeter.skillgraph._finding import Finding
from knowmeter.skillgraph._paths import find_library_root
from knowmeter.skillgraph._skill import Skill

#: the relation kinds whose items name another skill (a name, or ``{skill: name, …}``)
RELATION_KINDS = (
    "adjacent",
    "related",
    "broader",
    "narrower",
    "suppresses",
    "boundary",
    "disjoint_with",
    "verify_with",
    "depends_on",
)
_REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def graph_findings(skill: Skill) -> list[Finding]:
    """``relation-target`` and ``truth-source-file`` findings of one v8 SKILL.md."""
    return _relations(skill) + _grounding(skill)


def _relations(skill: Skill) -> list[Finding]:
    relations = skill.frontmatter.get("relations")
    if not isinstance(relations, dict):
        return []
    known = known_skills(_library(skill.path))
    out = []
    for kind in RELATION_KINDS:
        items = relations.get(kind)
        for item in items if isinstance(items, list) else []:
            target = item.get("skill") if isinstance(item, dict) else item
            if not isinstance(target, str) or not target.strip():
                continue
            name = target.strip()
            if name in known or re.split(r"[/:]", name)[-1] in known:
                continue
            out.append(
                Finding(
                    skill.path,
                    skill.key_lines.get("relations"),
                    "relation-target",
                    f"relations.{kind}: {name!r} does not match any known skill in {_library(skill.path)}; "
                    "add the skill or correct the name",
                )
            )
    return out


def _grounding(skill: Skill) -> list[Finding]:
    grounding = skill.frontmatter.get("grounding")
    sources: Any = grounding.get("truth_sources") if isinstance(grounding, dict) else None
    out = []
    for source in sources if isinstance(sources, list) else []:
        raw = source.get("path") if isinstance(source, dict) else source
        if not isinstance(raw, str) or not raw.strip() or _REMOTE.match(raw):
            continue
        path = raw.split("#")[0].strip()
        if not (skill.repo_root / path).exists():
            out.append(
                Finding(
                    skill.path,
                    skill.key_lines.get("grounding"),
                    "truth-source-file",
                    f"grounding.truth_sources: {path} does not exist under {skill.repo_root} "
                    "(Skill Graph's drift gate reports the skill BROKEN)",
                )
            )
    return out


def _library(path: Path) -> Path:
    """The folder whose skills a relation may name: the library's ``skills/``, else the folders beside the skill's."""
    root = find_library_root(path)
    if root is not None and (root / "skills").is_dir():
        return root / "skills"
    return path.resolve().parent.parent


@cache
def known_skills(folder: Path) -> frozenset[str]:
    """The names of the skills under ``folder``: each SKILL.md's folder name (lint's
    ``name-folder`` rule holds a skill's name to it)."""
    return frozenset(p.parent.name for p in folder.rglob("SKILL.md"))
