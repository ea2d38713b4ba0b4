"""Schema checks of the v8 frontmatter and the ``audit-state.json`` sidecar, with the reason
labels Skill Graph's ``skill-lint.js`` prints (``required-missing``, ``enum-fail``,
``type-fail``, ``additionalProperty``, …; a missing ``subject`` / ``public`` / ``scope`` is a
``v8 classification field missing``).

The schema is the skill repository's own when it has one (``schemas/skill-audit-state.schema.json``,
``schemas/SKILL_METADATA_PROTOCOL_schema.json`` at its root — where Skill Graph's lint looks),
else the built-in rules below, which carry the published v8 schemas' required fields, enums,
types and bounds for every top-level key (nested objects of the sidecar's telemetry blocks are
checked only for being objects).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SIDECAR_SCHEMA_FILE = "skill-audit-state.schema.json"
FRONTMATTER_SCHEMA_FILE = "SKILL_METADATA_PROTOCOL_schema.json"
#: the v8 frontmatter fields Skill Graph names "classification fields" when missing
V8_CLASSIFICATION = ("subject", "public", "scope")
SUBJECTS = (
    "backend-engineering",
    "frontend-engineering",
    "software-architecture",
    "data-engineering",
    "agent-ops",
    "ai-engineering",
    "quality-assurance",
    "design",
    "reasoning-strategy",
    "software-engineering-method",
    "knowledge-organization",
    "product-domain",
)
COMPREHENSION_VERDICTS = ("PASS", "SHALLOW", "REDUNDANT", "UNVERIFIED", "PROVISIONAL", "SKIPPED_BASELINE_HIGH", "NA")

_DATE = {"type": "string", "format": "date"}
_HASH = {"type": "string", "pattern": "^[a-f0-9]{64}$"}


def _enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def _when(state: str) -> dict[str, Any]:
    """eval_state: <state> ⇒ eval_artifacts: present (the sidecar-local rule)."""
    return {
        "if": {"properties": {"eval_state": {"const": state}}, "required": ["eval_state"]},
        "then": {"properties": {"eval_artifacts": {"const": "present"}}, "required": ["eval_artifacts"]},
    }


BUILTIN_SIDECAR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["schema_version", "owner", "freshness", "drift_check", "eval_artifacts", "eval_state", "routing_eval"],
    "properties": {
        "schema_version": {"oneOf": [{"type": "integer", "enum": [8]}, {"type": "string", "enum": ["8"]}]},
        "version": {"type": "string", "pattern": r"^[0-9]+\.[0-9]+\.[0-9]+$"},
        "skill_graph_protocol": {"type": "string"},
        "urn": {"type": "string"},
        "owner": {"type": "string"},
        "repo": {"type": "array"},
        "freshness": _DATE,
        "reviewed_at": _DATE,
        "drift_check": {
            "type": "object",
            "additionalProperties": False,
            "required": ["last_verified"],
            "properties": {
                "last_verified": _DATE,
                "verified_at": _DATE,
                "truth_source_hashes": {"type": "object", "additionalProperties": _HASH},
            },
        },
        "eval_artifacts": _enum("none", "planned", "present"),
        "eval_state": _enum("unverified", "passing", "monitored"),
        "routing_eval": _enum("absent", "present"),
        "last_audited": _DATE,
        "last_changed": _DATE,
        "structural_verdict": _enum("PASS", "PASS_WITH_FIXES", "FAIL", "UNVERIFIED"),
        "truth_verdict": _enum("PASS", "DRIFT", "BROKEN", "UNVERIFIED"),
        "comprehension_verdict": _enum(*COMPREHENSION_VERDICTS),
        "lint_verdict": _enum("PASS", "FAIL", "UNKNOWN"),
        "drift_status": _enum("OK", "DRIFT", "BROKEN", "STALE", "NO_BASELINE", "EXTERNAL_UNHASHED", "UNKNOWN"),
        "eval_score": {"type": "number", "minimum": 0, "maximum": 5},
        "eval_failed_ids": {"type": "array", "items": {"type": "string"}},
        "eval_last_run": {
            "type": "object",
            "additionalProperties": False,
            "required": ["at", "status"],
            "properties": {
                "at": {"type": "string", "format": "date-time"},
                "status": _enum("pass", "fail", "mixed"),
                "runner": {"type": "string"},
                "model": {"type": "string"},
                "receipt": {"type": "string"},
                "receipt_hash": _HASH,
                "bidirectional": {"type": "object"},
            },
        },
        "eval": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "artifacts": _enum("none", "planned", "present"),
                "content_state": _enum("unverified", "passing", "monitored"),
                "routing_coverage": _enum("absent", "present"),
                "comprehension_state": _enum("absent", "present"),
            },
        },
        "comprehension_state": _enum("absent", "present"),
        "marketplace_tier": _enum("S", "A", "B", "C"),
        "portability": {"type": "object", "required": ["readiness", "targets"]},
        "lifecycle": {"type": "object"},
        "runtime_telemetry": {"type": "object", "required": ["feedback_source"]},
        "model_run_coverage": {"type": "object"},
    },
    "allOf": [_when("passing"), _when("monitored")],
}

#: every other key the published v8 frontmatter schema declares (it allows no key beyond these:
#: ``schema_version``, ``owner``, ``eval_*`` … moved to the sidecar)
_V8_OTHER_KEYS = (
    "taxonomy_domain", "project", "stability", "superseded_by", "license", "compatibility", "allowed-tools",
    "triggers", "keywords", "examples", "anti_examples", "paths", "dependencies", "codebase_layer",
    "applicable_tasks", "project_adoption_stage", "environment", "internal_tools", "relations", "grounding",
)  # fmt: skip

BUILTIN_FRONTMATTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "description", *V8_CLASSIFICATION],
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "subject": _enum(*SUBJECTS),
        "subjects": {"type": "array", "items": _enum(*SUBJECTS)},
        "public": {"type": "boolean"},
        "scope": {"type": "string"},
        **{f: {"type": "string"} for f in ("mental_model", "purpose", "concept_boundary", "analogy", "misconception")},
        **{key: {} for key in _V8_OTHER_KEYS},
    },
}


#: jsonschema validator → (Skill Graph's reason label, what the value must be)
_REASONS = {
    "const": ("const-fail", "must be {value!r}"),
    "type": ("type-fail", "must be {value}"),
    "format": ("format-fail", "must be a {value}"),
    "pattern": ("pattern-fail", "does not match /{value}/"),
    "minimum": ("minimum-fail", "must be >= {value}"),
    "maximum": ("maximum-fail", "must be <= {value}"),
    "oneOf": ("oneOf violation", "must match exactly one allowed shape"),
    "anyOf": ("anyOf violation", "must match one of the allowed shapes"),
    "enum": ("enum-fail", ""),
}


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """One schema violation: the dotted field, Skill Graph's reason label and the message."""

    field: str
    label: str
    message: str


def sidecar_problems(state: Any, repo_root: Path | None = None) -> list[SchemaProblem]:
    """What is wrong with an ``audit-state.json`` object, by the repository's schema or the built-in one."""
    return _problems(state, _schema(repo_root, SIDECAR_SCHEMA_FILE, BUILTIN_SIDECAR_SCHEMA), "the audit-state schema")


def frontmatter_problems(frontmatter: dict[str, Any], repo_root: Path | None = None) -> list[SchemaProblem]:
    """What is wrong with a v8 SKILL.md frontmatter, by the repository's schema or the built-in one."""
    schema = _schema(repo_root, FRONTMATTER_SCHEMA_FILE, BUILTIN_FRONTMATTER_SCHEMA)
    return _problems(frontmatter, schema, "the v8 frontmatter schema")


def schema_version_number(value: object) -> int | None:
    """A ``schema_version`` as a number (``6`` or ``"6"``); ``None`` when it is none (absent, a
    boolean, other text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def versioned_frontmatter_problems(frontmatter: dict[str, Any], repo_root: Path) -> list[SchemaProblem] | None:
    """What is wrong with a v4–v7 frontmatter by the repository's own schema for its
    ``schema_version`` (``schemas/skill.v<N>.schema.json``, else ``schemas/skill.schema.json`` when
    that one is for N, as Skill Graph v0.5.6 ships them); ``None`` when the repository has neither.
    YAML dates are checked as the ISO strings the author wrote."""
    version = frontmatter.get("schema_version")
    number = schema_version_number(version)
    if number is None:
        return None
    named, canonical = (
        repo_root / "schemas" / f"skill.v{number}.schema.json",
        repo_root / "schemas" / "skill.schema.json",
    )
    schema = _load(named) if named.is_file() else None
    if schema is None and canonical.is_file():
        loaded = _load(canonical)
        declared = (loaded or {}).get("properties", {}).get("schema_version")
        schema = loaded if isinstance(declared, dict) and _accepts(declared, version) else None
    if schema is None:
        return None
    return _problems(json.loads(json.dumps(frontmatter, default=_iso)), schema, f"the v{number} frontmatter schema")


def _accepts(subschema: dict[str, Any], value: Any) -> bool:
    from jsonschema import Draft202012Validator

    return bool(Draft202012Validator(subschema).is_valid(value))


def _iso(value: Any) -> str:
    """A YAML date / timestamp as the ISO text it was written as; anything else as ``str``."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _schema(repo_root: Path | None, name: str, builtin: dict[str, Any]) -> dict[str, Any]:
    if repo_root is not None and (repo_root / "schemas" / name).is_file():
        loaded = _load(repo_root / "schemas" / name)
        if loaded is not None:
            return loaded
    return builtin


@cache
def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None  # an unreadable schema of the repository: the built-in rules apply
    return data if isinstance(data, dict) else None


def _problems(value: Any, schema: dict[str, Any], what: str) -> list[SchemaProblem]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    out: dict[SchemaProblem, None] = {}  # jsonschema reports a missing field once per required list: once here
    for error in sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path]):
        out.update(dict.fromkeys(_describe(error, what)))
    return list(out)


def _describe(error: Any, what: str) -> list[SchemaProblem]:
    """Skill Graph's label and a message for one jsonschema error."""
    where = ".".join(str(p) for p in error.absolute_path)
    field = where or "frontmatter"
    kind = error.validator
    if kind == "required":
        missing = [n for n in error.validator_value if isinstance(error.instance, dict) and n not in error.instance]
        return [
            SchemaProblem(
                f"{where}.{n}" if where else n,
                "v8 classification field missing" if n in V8_CLASSIFICATION and not where else "required-missing",
                (
                    f"v8 classification field missing: `{n}` (v8 requires name, description, subject, public, scope)"
                    if n in V8_CLASSIFICATION and not where
                    else f"required-missing: `{n}` is required by {what}" + (f" in `{where}`" if where else "")
                ),
            )
            for n in missing
        ]
    if kind == "additionalProperties":
        extra = [k for k in error.instance if k not in error.schema.get("properties", {})]
        return [
            SchemaProblem(
                f"{where}.{k}" if where else k,
                "additionalProperty",
                f"additionalProperty: `{k}` is not declared in {what}",
            )
            for k in extra
        ]
    got = json.dumps(error.instance, ensure_ascii=False)
    got = got if len(got) <= 60 else got[:59] + "…"
    label, text = _REASONS.get(kind, (f"{kind}-fail", "{message}"))
    text = text.format(value=error.validator_value, message=error.message)
    if kind == "enum":
        text = "must be one of " + ", ".join(json.dumps(v) for v in error.validator_value)
    return [SchemaProblem(field, label, f"{label}: `{field}` {text} (got {got})")]
