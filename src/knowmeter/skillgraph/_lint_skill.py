"""Checks on one SKILL.md, by the rules of *its* shape (``FORMATS.md`` §1.3–1.5):

* v8 source (today's ``skill-lint.js``): the frontmatter schema (``name, description, subject,
  public, scope``; the subject shelf), a blank ``scope``, the sidecar ``audit-state.json`` against
  its schema, the cross-file rule (sidecar ``comprehension_state: present`` ⇒ the five flat
  Understanding fields in the frontmatter), the five skill-content sections — present, with
  content (a line with a word of two or more characters), ``## Concept of the skill`` leading;
  the sidecar's unset Audit Status verdicts (a warning); relation targets and grounding truth
  sources (``_lint_graph``);
* v4 / v6 source (the v0.5.6 lint): the required sections of the skill's ``type`` (capability,
  workflow, router, overlay; ``## Evals`` when ``eval_artifacts: present``), sections under 50
  characters, ``comprehension_state: present`` ⇒ the understanding fields;
* a marketplace export (either exporter): none of the source's section or bookkeeping rules
  (Skill Graph's own tools do not apply them to exports) — the ``marketplace-export`` warning
  for fields exported as the literal ``'|'``;
* every shape: the folder named after the skill, eval bookkeeping (``eval_state`` ⇒
  ``eval_artifacts: present``, which must have an eval file)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from knowmeter.skillgraph._dimension import CONCEPT_FIELDS
from knowmeter.skillgraph._finding import Finding
from knowmeter.skillgraph._lint_graph import graph_findings
from knowmeter.skillgraph._locate import eval_folders, find_case_files
from knowmeter.skillgraph._markdown import Section
from knowmeter.skillgraph._schema import frontmatter_problems, sidecar_problems, versioned_frontmatter_problems
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
#: the v8 frontmatter's Understanding fields (``boundary`` is the deprecated alias of ``concept_boundary``)
_V8_UNDERSTANDING = ("mental_model", "purpose", "concept_boundary", "analogy", "misconception")
#: the sidecar's Audit Status verdicts Skill Graph's lint warns about when unset
_VERDICTS = ("structural_verdict", "truth_verdict", "comprehension_verdict")
_WORD = re.compile(r"\w{2,}")
_HEADING = re.compile(r"#{1,6}\s")
#: Skill Graph's identifier syntax for a skill's name
_NAME = re.compile(r"^[a-z0-9]+(?:[-/:][a-z0-9]+)*$")


def lint_skill(skill: Skill) -> list[Finding]:
    """The SKILL.md's own checks (frontmatter, sections, sidecar, eval artifacts)."""
    out: list[Finding] = []
    v8_source = skill.export is None and skill.shape == "v8"
    last = re.split(r"[/:]", skill.name)[-1] if v8_source else skill.name  # v8 names may be namespaced
    if skill.path.name == "SKILL.md" and skill.path.parent.name != last:
        out.append(
            Finding(
                skill.path,
                skill.key_lines.get("name"),
                "name-folder",
                f"folder {skill.path.parent.name!r} but name {skill.name!r}; rename one to match",
                level="error" if v8_source else None,  # Skill Graph's lint fails a v8 skill on it
            )
        )
    if skill.marketplace_export:
        out.append(Finding(skill.path, 1, "marketplace-export", str(skill.marketplace_reason)))
    if v8_source:
        out += _v8_frontmatter(skill)
        out += _v8_sidecar(skill)
        out += _v8_sections(skill)
        out += graph_findings(skill)
    elif skill.export is None:
        out += _versioned_schema(skill)
        out += _understanding(skill)
        out += _sections(skill)
    out += _eval_bookkeeping(skill)
    return out


def _versioned_schema(skill: Skill) -> list[Finding]:
    """A v3–v7 frontmatter against the repository's schema for its ``schema_version``, as the
    v0.5.6 lint validates it (nothing when the repository has no such schema file)."""
    problems = versioned_frontmatter_problems(skill.frontmatter, skill.repo_root) or []
    return [
        Finding(skill.path, skill.key_lines.get(p.field.split(".")[0], 2), "frontmatter-schema", p.message)
        for p in problems
    ]


def _v8_frontmatter(skill: Skill) -> list[Finding]:
    out = [
        Finding(skill.path, skill.key_lines.get(p.field.split(".")[0], 2), "frontmatter-schema", p.message)
        for p in frontmatter_problems(skill.frontmatter, skill.repo_root)
    ]
    fm = skill.frontmatter

    def problem(key: str, message: str, rule: str = "frontmatter-schema") -> None:
        out.append(Finding(skill.path, skill.key_lines.get(key), rule, message))

    if not _NAME.match(skill.name):
        problem(
            "name", f"`name` {skill.name!r} must be lowercase identifier syntax (a-z, 0-9, '-', namespaces '/' ':')"
        )
    for key in ("description", "scope"):
        if isinstance(fm.get(key), str) and not fm[key].strip():
            problem(key, f"`{key}` must be non-empty")
    subjects = fm.get("subjects")
    if isinstance(fm.get("subject"), str) and isinstance(subjects, list) and subjects and subjects[0] != fm["subject"]:
        problem("subjects", f"`subjects[0]` must be `subject` ({fm['subject']!r}, got {subjects[0]!r})")
    compat = fm.get("compatibility")
    for old, new in (("runtimes", "agent_runtimes"), ("node", "node_version")):
        if isinstance(compat, dict) and old in compat and new in compat and compat[old] != compat[new]:
            problem(
                "compatibility", f"`compatibility.{old}` and `compatibility.{new}` differ; the alias pair must match"
            )
    keywords = fm.get("keywords")
    if isinstance(keywords, list) and len(keywords) > 10:
        problem("keywords", f"`keywords` has {len(keywords)} entries; the v8 cap is 10", rule="keywords-cap")
    return out


def _v8_sidecar(skill: Skill) -> list[Finding]:
    if skill.audit_state is None or skill.audit_state_path is None:
        return []  # the sidecar is optional (an unmigrated or new skill)
    where = skill.audit_state_path
    out = [
        Finding(where, _json_key_line(where, p.field.split(".")[0]), "sidecar-schema", p.message)
        for p in sidecar_problems(skill.audit_state, skill.repo_root)
    ]
    unset = [v for v in _VERDICTS if v not in skill.audit_state]
    if unset:
        out.append(
            Finding(
                where,
                1,
                "sidecar-verdicts",
                f"audit-state.json is missing Audit Status verdict field(s): {', '.join(unset)}; run Skill Graph's "
                "audit loop to stamp them (not by hand)",
            )
        )
    if skill.audit_state.get("comprehension_state") == "present":
        fm = skill.frontmatter
        missing = [
            f
            for f in _V8_UNDERSTANDING
            if fm.get(f) in (None, "") and not (f == "concept_boundary" and fm.get("boundary") not in (None, ""))
        ]
        if missing:
            out.append(
                Finding(
                    skill.path,
                    2,
                    "comprehension-understanding",
                    "audit-state.json declares comprehension_state: present, but the frontmatter is missing required "
                    f"Understanding field(s): {', '.join(missing)}; add them or set comprehension_state: absent",
                )
            )
    return out


def _v8_sections(skill: Skill) -> list[Finding]:
    top = [s for s in skill.sections if s.level == 2]
    first: dict[str, Section] = {}
    for top_sec in top:
        first.setdefault(top_sec.title, top_sec)
    out = []
    for title in _V8_SECTIONS:
        sec = first.get(title)
        if sec is None:
            out.append(
                Finding(
                    skill.path,
                    skill.body_line,
                    "required-section",
                    f"required skill-content body section missing: `## {title}` (v8 requires Concept of the skill, "
                    "Coverage, Philosophy of the skill, Verification, Do NOT Use When)",
                )
            )
        elif not any(_WORD.search(line) for line in _own_text(sec).splitlines()):
            out.append(
                Finding(
                    skill.path, sec.line, "required-section", f"`## {title}` is present but EMPTY: write the section"
                )
            )
    lead = first.get(_V8_SECTIONS[0])
    before = [first[t] for t in _V8_SECTIONS[1:] if t in first and lead is not None and first[t].line < lead.line]
    if lead is not None and before:
        out.append(
            Finding(
                skill.path,
                lead.line,
                "required-section",
                f"`## {_V8_SECTIONS[0]}` must lead the skill-content sections, but `## {before[0].title}` "
                f"(line {before[0].line}) precedes it",
            )
        )
    return out


def _own_text(sec: Section) -> str:
    """A section's text up to its first sub-heading (Skill Graph counts content before any heading)."""
    lines = []
    for line in sec.text.splitlines():
        if _HEADING.match(line):
            break
        lines.append(line)
    return "\n".join(lines)


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
    kind = skill.archetype
    required: tuple[str, ...] = _V4_SECTIONS.get(kind, _V4_SECTIONS["capability"])
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
                    f"missing '## {title}' ({skill.shape} type: {kind} requires it); add the section",
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
