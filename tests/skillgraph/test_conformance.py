"""Conformance with Skill Graph's own gate-conformance suite (``audits/gate-conformance/spec.yaml``
of the Skill Graph repository): the same eight scenarios — one valid v8 skill, then one skill
broken in exactly one way per scenario — with the exit code and the reason substrings Skill
Graph's spec asserts for its own tools (``skill-lint.js``, the drift sentinel). The fixtures are
written here, to the scenarios' description; the sidecar schema they are checked against is also
validated with jsonschema against Skill Graph's published schema file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.skillgraph import frontmatter_problems, lint_paths, sidecar_problems
from knowmeter.skillgraph._schema import BUILTIN_FRONTMATTER_SCHEMA

BODY = """
# {title}

## Concept of the skill

**What it is:** a small skill kept only for the conformance scenarios.
**Mental model:** change one thing, and exactly one check fires.

## Coverage

The v8 frontmatter and its sidecar, nothing else.

## Philosophy of the skill

One broken thing per skill keeps the reason of the failure unambiguous.

## Verification

- [ ] lint gives the reason the scenario names.

## Do NOT Use When

- Always: this is a test skill.
"""

FRONT = {
    "name": "conformant",
    "description": "A v8 test skill for the conformance scenarios; not for real use.",
    "subject": "backend-engineering",
    "public": True,
    "scope": "The conformance scenarios only. Out: anything real.",
    "stability": "experimental",
}

SIDECAR: dict[str, Any] = {
    "schema_version": 8,
    "version": "1.0.0",
    "owner": "knowmeter-tests",
    "freshness": "2026-06-12",
    "drift_check": {"last_verified": "2026-06-12"},
    "eval_artifacts": "none",
    "eval_state": "unverified",
    "routing_eval": "absent",
    "structural_verdict": "UNVERIFIED",
    "truth_verdict": "UNVERIFIED",
    "comprehension_verdict": "UNVERIFIED",
}


def _skill(root: Path, name: str, front: dict[str, Any], sidecar: dict[str, Any] | None) -> Path:
    import yaml

    folder = root / "skills" / "backend-engineering" / name
    folder.mkdir(parents=True)
    dumped = yaml.safe_dump({**front, "name": name}, sort_keys=False)
    (folder / "SKILL.md").write_text(f"---\n{dumped}---\n{BODY.format(title=name)}")
    if sidecar is not None:
        (folder / "audit-state.json").write_text(json.dumps(sidecar, indent=2))
    return folder


def _without(data: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != key}


UNDERSTANDING = {"comprehension_state": "present"}
#: the one rule each scenario breaks (none for the valid skill)
RULE_OF = {
    "structural-valid-baseline": (),
    "structural-missing-scope": ("frontmatter-schema",),
    "structural-invalid-subject": ("frontmatter-schema",),
    "structural-dangling-verify-with": ("relation-target",),
    "protocol-comprehension-present-missing-understanding": ("comprehension-understanding",),
    "structural-invalid-sidecar": ("sidecar-schema",),
    "truth-source-broken": ("truth-source-file",),
    "warn-missing-audit-status-verdicts": ("sidecar-verdicts",),
}
# (scenario id of Skill Graph's spec, frontmatter, sidecar, exit code, reason substrings)
SCENARIOS: list[tuple[str, dict[str, Any], dict[str, Any] | None, int, list[str]]] = [
    ("structural-valid-baseline", FRONT, SIDECAR, 0, []),
    ("structural-missing-scope", _without(FRONT, "scope"), SIDECAR, 1, ["v8 classification field missing", "`scope`"]),
    ("structural-invalid-subject", {**FRONT, "subject": "cooking"}, SIDECAR, 1, ["enum-fail"]),
    (
        "structural-dangling-verify-with",
        {**FRONT, "relations": {"verify_with": ["no-such-skill-anywhere"]}},
        SIDECAR,
        1,
        ["does not match any known skill"],
    ),
    (
        "protocol-comprehension-present-missing-understanding",
        FRONT,
        {**SIDECAR, **UNDERSTANDING},
        1,
        ["audit-state.json declares comprehension_state: present", "missing required Understanding field"],
    ),
    ("structural-invalid-sidecar", FRONT, _without(SIDECAR, "owner"), 1, ["required-missing", "`owner`"]),
    (
        "truth-source-broken",
        {**FRONT, "grounding": {"grounding_mode": "repo_specific", "truth_sources": [{"path": "docs/MISSING.md"}]}},
        SIDECAR,
        1,
        ["BROKEN"],
    ),
    (
        "warn-missing-audit-status-verdicts",
        FRONT,
        _without(_without(_without(SIDECAR, "structural_verdict"), "truth_verdict"), "comprehension_verdict"),
        0,
        ["missing Audit Status verdict field(s): structural_verdict, truth_verdict, comprehension_verdict"],
    ),
]


@pytest.mark.parametrize(("scenario", "front", "sidecar", "code", "reasons"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_gate_conformance_scenario(
    tmp_path: Path, scenario: str, front: dict[str, Any], sidecar: dict[str, Any] | None, code: int, reasons: list[str]
) -> None:
    folder = _skill(tmp_path, scenario, front, sidecar)
    result = CliRunner().invoke(cli, ["skill", "lint", str(folder)])
    assert result.exit_code == code, result.output
    for reason in reasons:
        assert reason in result.output, result.output
    kinds = {
        f["rule"]
        for f in json.loads(CliRunner().invoke(cli, ["skill", "lint", "--json", str(folder)]).output)["findings"]
    }
    assert kinds == set(RULE_OF[scenario]), kinds
    if code == 0 and not reasons:
        assert result.output.strip().endswith("0 error(s), 0 warning(s) in 1 skill(s) and 0 eval file(s)")


@pytest.fixture(scope="session")
def published_sidecar_schema(ref: Path) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((ref / "schemas" / "head-skill-audit-state.schema.json").read_text())
    return schema


@pytest.mark.parametrize(
    "doc",
    [
        SIDECAR,
        _without(SIDECAR, "owner"),
        {**SIDECAR, "eval_state": "passing"},  # passing without eval_artifacts: present
        {**SIDECAR, "comprehension_verdict": "GREAT"},
        {**SIDECAR, "eval_score": 5.5},
        {**SIDECAR, "eval_failed_ids": [3]},
        {**SIDECAR, "eval_last_run": {"at": "2026-06-12T10:00:00Z", "status": "pass", "receipt_hash": "xyz"}},
        {**SIDECAR, "application_verdict": "UNVERIFIED"},
        {**SIDECAR, "freshness": "June"},
    ],
)
def test_the_builtin_sidecar_rules_agree_with_the_published_schema(
    doc: dict[str, Any], published_sidecar_schema: dict[str, Any]
) -> None:
    """Without the repository's own schema file, knowmeter checks the sidecar by built-in rules:
    they accept and reject exactly what Skill Graph's published schema does on these documents."""
    validator = jsonschema.Draft202012Validator(
        published_sidecar_schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    assert (sidecar_problems(doc) == []) == validator.is_valid(doc)


def test_a_repositorys_own_schema_is_used_when_it_has_one(tmp_path: Path, ref: Path) -> None:
    """Like Skill Graph's lint, the schema beside the skills (``schemas/``) wins over the built-in rules."""
    (tmp_path / "schemas").mkdir()
    schema = json.loads((ref / "schemas" / "head-skill-audit-state.schema.json").read_text())
    schema["required"].append("repo")
    (tmp_path / "schemas" / "skill-audit-state.schema.json").write_text(json.dumps(schema))
    folder = _skill(tmp_path, "conformant", FRONT, SIDECAR)
    result = CliRunner().invoke(cli, ["skill", "lint", str(folder)])
    assert result.exit_code == 1 and "required-missing: `repo`" in result.output, result.output


@pytest.mark.parametrize(
    ("change", "rule", "severity", "reason"),
    [
        ({"name": "Bad_Name"}, "frontmatter-schema", "error", "must be lowercase identifier syntax"),
        ({"description": "  "}, "frontmatter-schema", "error", "`description` must be non-empty"),
        ({"scope": ""}, "frontmatter-schema", "error", "`scope` must be non-empty"),
        ({"subjects": ["design", "backend-engineering"]}, "frontmatter-schema", "error", "`subjects[0]` must be"),
        ({"compatibility": {"node": ">=18", "node_version": ">=20"}}, "frontmatter-schema", "error", "alias pair"),
        ({"keywords": [f"k{i}" for i in range(11)]}, "keywords-cap", "warning", "has 11 entries; the v8 cap is 10"),
    ],
)
def test_skill_lints_other_v8_checks(
    tmp_path: Path, change: dict[str, Any], rule: str, severity: str, reason: str
) -> None:
    """The rest of skill-lint.js's own checks on a v8 source: the same verdict on the same file."""
    # the folder is named as the skill, so only the changed field is wrong
    folder = _skill(tmp_path, change.get("name", "conformant"), {**FRONT, **change}, SIDECAR)
    (hit,) = [f for f in lint_paths([folder]).findings if f.rule == rule]
    assert hit.severity == severity and reason in hit.message, hit.message


def test_a_v8_folder_not_named_after_the_skill_is_an_error(tmp_path: Path) -> None:
    folder = _skill(tmp_path, "conformant", FRONT, SIDECAR).rename(tmp_path / "skills" / "elsewhere")
    (hit,) = lint_paths([folder]).findings
    assert (hit.rule, hit.severity) == ("name-folder", "error")  # skill-lint.js fails it; a v4 skill only warns


@pytest.mark.parametrize(
    "doc",
    [
        FRONT,
        {**FRONT, "schema_version": 8},  # moved to the sidecar: the v8 frontmatter schema has no such key
        {**FRONT, "eval_artifacts": "present"},
        {**FRONT, "subject": "cooking"},
        {**FRONT, "relations": {"related": ["x"]}, "keywords": ["k"], "license": "MIT"},
        {key: value for key, value in FRONT.items() if key != "public"},
    ],
)
def test_the_builtin_frontmatter_rules_agree_with_the_published_schema(doc: dict[str, Any], ref: Path) -> None:
    """The built-in v8 frontmatter rules accept and reject what Skill Graph's published schema does
    on these documents — a key the schema does not declare included (it passed silently)."""
    schema = json.loads((ref / "schemas" / "head-SKILL_METADATA_PROTOCOL_schema.json").read_text())
    assert (frontmatter_problems(doc) == []) == jsonschema.Draft202012Validator(schema).is_valid(doc)
    assert set(BUILTIN_FRONTMATTER_SCHEMA["properties"]) == set(schema["properties"])


@pytest.mark.parametrize(
    ("schema_files", "version", "extra", "reason"),
    [
        ({"skill.v4.schema.json": "v0.5.6-skill.v4.schema.json"}, 4, "", None),
        ({"skill.v4.schema.json": "v0.5.6-skill.v4.schema.json"}, 4, "eval_score: 3\n", "`eval_score` is not declared"),
        ({"skill.schema.json": "v0.5.6-skill.schema.json"}, 6, "", None),  # v0.5.6's canonical schema is v6
        ({"skill.schema.json": "v0.5.6-skill.schema.json"}, 6, "eval_score: 7\n", "maximum-fail: `eval_score`"),
        ({"skill.schema.json": "v0.5.6-skill.schema.json"}, 4, "eval_score: 3\n", None),  # no schema for v4 here
    ],
)
def test_a_v4_or_v6_skill_meets_the_repositorys_schema_for_its_version(
    tmp_path: Path, ref: Path, schema_files: dict[str, str], version: int, extra: str, reason: str | None
) -> None:
    """The v0.5.6 lint validates a SKILL.md against the schema of its schema_version: with that
    schema in the repository, knowmeter does too — the real type-safety skill passes (its YAML
    dates are the strings written), a key the schema does not declare or a value past its bound
    is an error, as it is for Skill Graph (knowmeter did not look)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "schemas").mkdir()
    for name, source in schema_files.items():
        (tmp_path / "schemas" / name).write_bytes((ref / "schemas" / source).read_bytes())
    folder = tmp_path / "skills" / "type-safety"
    folder.mkdir(parents=True)
    text = (ref / "skills" / "type-safety" / "SKILL.md").read_text()
    text = text.replace("schema_version: 4\n", f"schema_version: {version}\n{extra}", 1)
    (folder / "SKILL.md").write_text(text)
    found = [f for f in lint_paths([folder]).findings if f.rule == "frontmatter-schema"]
    if reason is None:
        assert found == []
    else:
        assert len(found) == 1 and reason in found[0].message and found[0].severity == "error", found
        assert found[0].line == 4  # the offending key's line (after --- , the schema comment and schema_version)
