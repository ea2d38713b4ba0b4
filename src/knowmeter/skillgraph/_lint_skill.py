"""Checks on one SKILL.md: the ones Skill Graph's lint had (``FORMATS.md`` §1.3–1.4) — the
understanding fields ``comprehension_state: present`` requires (cross-file in v8), the required
body sections per shape and archetype, near-empty sections, eval bookkeeping, the folder name —
and the marketplace-export flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowmeter.skillgraph._dimension import CONCEPT_FIELDS
from knowmeter.skillgraph._finding import Finding
from knowmeter.skillgraph._locate import eval_folders, find_case_files
from knowmeter.skillgraph._skill import UNDERSTANDING_FIELDS, Skill

_MIN_SECTION_CHARS = 50  # Skill Graph warned below 50 non-whitespace characters

# FORMATS.md §1.4: required H2 sections per era and archetype
_V4_SECTIONS = {
    "capability": ("Coverage", "Philosophy", "Verification", "Do NOT Use When"),
    "workflow": ("Coverage", "Philosophy", "Verification", "Do NOT Use When", "Workflow"),
    "router": ("Coverage", "Routing Rules", "Do NOT Use When"),
    "overlay": ("Coverage", "Overlay Rules", "Extends", "Do NOT Use When"),
}
_V8_SECTIONS = ("Concept of the skill", "Coverage", "Philosophy of the skill", "Verification", "Do NOT Use When")


def lint_skill(skill: Skill) -> list[Finding]:
    """The SKILL.md's own checks (frontmatter, sections, sidecar, eval artifacts)."""
    out: list[Finding] = []
    if skill.path.name == "SKILL.md" and skill.path.parent.name != skill.name:
        out.append(
            Finding(
                skill.path,
                skill.key_lines.get("name"),
                "name-folder",
                f"folder {skill.path.parent.name!r} but name {skill.name!r}; rename one to match",
            )
        )
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
    return [
        Finding(
            where,
            line,
            "comprehension-understanding",
            f"comprehension_state: present but {', '.join(missing)} missing; add them as {how} "
            "or set comprehension_state: absent",
        )
    ]


def _sections(skill: Skill) -> list[Finding]:
    top = [s for s in skill.sections if s.level == 2]
    titles = [s.title.lower() for s in top]
    out: list[Finding] = []
    if skill.shape == "v8":
        required: tuple[str, ...] = _V8_SECTIONS
        if titles and "concept of the skill" in titles and titles[0] != "concept of the skill":
            out.append(
                Finding(
                    skill.path,
                    top[0].line,
                    "required-section",
                    "'## Concept of the skill' must be the first section (v8)",
                )
            )
    else:
        kind = skill.frontmatter.get("type", skill.frontmatter.get("archetype", "capability"))
        required = _V4_SECTIONS.get(str(kind), _V4_SECTIONS["capability"])
        artifacts, _, _ = _state_source(skill, "eval_artifacts")
        if artifacts == "present":
            required = (*required, "Evals")
    for title in required:
        if title.lower() not in titles:
            out.append(
                Finding(
                    skill.path,
                    skill.body_line,
                    "required-section",
                    f"missing '## {title}' ({skill.shape} {'skill' if skill.shape == 'v8' else 'type'} "
                    "requires it); add the section",
                )
            )
    for sec in top:
        if sec.title.lower() in {t.lower() for t in required} and len("".join(sec.text.split())) < _MIN_SECTION_CHARS:
            out.append(
                Finding(
                    skill.path,
                    sec.line,
                    "empty-section",
                    f"'## {sec.title}' has under {_MIN_SECTION_CHARS} non-whitespace characters",
                )
            )
    return out


def _eval_bookkeeping(skill: Skill) -> list[Finding]:
    out: list[Finding] = []
    artifacts, where, line = _state_source(skill, "eval_artifacts")
    state, s_where, s_line = _state_source(skill, "eval_state")
    if state in ("passing", "monitored") and artifacts != "present":
        out.append(
            Finding(
                s_where, s_line, "eval-state", f"eval_state: {state} needs eval_artifacts: present (got {artifacts!r})"
            )
        )
    if artifacts == "present" and not find_case_files(skill):
        looked = ", ".join(f"{folder}/" for folder in eval_folders(skill))
        out.append(
            Finding(
                where,
                line,
                "eval-artifacts",
                f"eval_artifacts: present but no eval file has skill_name {skill.name!r} (looked in "
                f"{looked}); add one or set eval_artifacts: planned",
            )
        )
    return out


def _json_key_line(path: Path, key: str) -> int | None:
    text = path.read_text(encoding="utf-8")
    at = text.find(f'"{key}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else None
