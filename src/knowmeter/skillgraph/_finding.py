"""A lint finding and the table of lint rules."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Severity = Literal["error", "warning"]
_MIN_SECTION_CHARS = 50  # Skill Graph warned below 50 non-whitespace characters

#: rule id → (severity, what it checks)
RULES: dict[str, tuple[Severity, str]] = {
    "comprehension-understanding": ("error", "comprehension_state: present but understanding fields are missing"),
    "required-section": ("error", "a body section the skill's shape / type requires is missing, empty or misplaced"),
    "frontmatter-schema": (
        "error",
        "the frontmatter breaks its schema (a required field, the subject shelf, a type, an undeclared key): "
        "v8 always, v3–v7 when the repository has schemas/skill.v<N>.schema.json",
    ),
    "sidecar-schema": ("error", "audit-state.json breaks its schema (a required field, an enum value, a type)"),
    "sidecar-verdicts": ("warning", "audit-state.json has no structural / truth / comprehension verdict yet"),
    "relation-target": ("error", "a relations.* target names no skill of the library (v8)"),
    "empty-section": ("warning", "a body section has under 50 non-whitespace characters"),
    "eval-artifacts": ("error", "eval_artifacts: present but no eval file names the skill"),
    "eval-state": ("error", "eval_state passing/monitored without eval_artifacts: present"),
    "name-folder": ("warning", "the skill's folder is not named after its 'name' (an error for a v8 source)"),
    "keywords-cap": ("warning", "a v8 skill lists more than 10 keywords (the documented cap)"),
    "marketplace-export": ("warning", "understanding fields are the literal '|' of a marketplace export"),
    "skill-not-found": ("warning", "no SKILL.md found for an eval file; skill checks skipped"),
    "skill-name": ("error", "the eval file's skill_name is not the skill's name"),
    "truth-source-file": (
        "error",
        "a truth source (an eval case's, or a v8 grounding's) cites a file that does not exist",
    ),
    "truth-source-range": ("error", "a truth source's line range runs past the end of the file"),
    "truth-source-anchor": ("error", "a truth source cites a heading anchor the file does not have"),
    "truth-source-drift": ("warning", "a cited line range straddles the section an anchor beside it names"),
    "grading-source": ("warning", "the skill has nothing for the case's dimension to grade against"),
    "concept-field": ("warning", "concept_field is not the one the case's dimension grades"),
    "far-transfer": ("warning", "R4: a transfer: far prompt shares a 4-gram with the skill body"),
    "c2-scenario": ("warning", "a C2 scenario the body already enumerates, or a C2 case tagged transfer: near"),
    "analogy-drift": ("warning", "a C6 case shares no word pair with the skill's analogy (the analogy changed)"),
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint finding: where (file, 1-based line when known, case id), which rule, how bad, what.
    ``level`` overrides the rule's severity where a shape's own tool rates it differently."""

    path: Path
    line: int | None
    rule: str
    message: str
    case_id: str | None = None
    level: Severity | None = None

    @property
    def severity(self) -> Severity:
        return self.level or RULES[self.rule][0]

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
        return {
            "file": str(self.path),
            "line": self.line,
            "rule": self.rule,
            "severity": self.severity,
            "case_id": self.case_id,
            "message": self.message,
        }
