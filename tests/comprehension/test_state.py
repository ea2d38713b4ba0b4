"""``--write-state`` writes what Skill Graph accepts: the written audit-state.json is validated with
jsonschema against Skill Graph's own sidecar schema (``schemas/head-skill-audit-state.schema.json``
of the reference folder, read here at test time) — string ids, a continuous score, the grader's
model, a receipt relative to the skill with its hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from knowmeter.comprehension import Parties, grader_model, skill_verdict, state_update, write_state
from knowmeter.report import ComprehensionVerdict, GraderInfo


@pytest.fixture(scope="session")
def sidecar_schema(skill_graph: Path) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((skill_graph / "schemas" / "head-skill-audit-state.schema.json").read_text())
    return schema


def _errors(doc: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def _stats(passed: int, graded: int, base_passed: int) -> dict[str, Any]:
    """Stats of one dimension in which the with-skill arm passes ``passed`` of ``graded`` cases."""
    failed = [str(i) for i in range(passed + 1, graded + 1)]
    arm = {"cases_graded": graded, "cases_passed": passed, "ungraded": 0, "failed_cases": failed}
    base = {"cases_graded": graded, "cases_passed": base_passed, "ungraded": 0, "failed_cases": []}
    paired = {
        "cases_paired": graded,
        "mcnemar": {"p_value": 0.01},
        "difference_in_pass_rate": (passed - base_passed) / graded,
        "underpowered": False,
        "underpowered_reasons": [],
        "mde": 0.2,
    }
    return {
        "overall": {"with_skill": arm, "baseline": base, "paired": paired},
        "dimensions": {"C1": {"with_skill": arm, "baseline": base}},
        "settings": {"alpha": 0.05},
    }


PARTIES = Parties("claude", "claude-sonnet-4-5", True, (("openai", "gpt-5", True),))
GRADERS = [GraderInfo(name="openai:gpt-5", executor="openai", model="gpt-5", non_llm=False)]


def _clean_sidecar(skill_dir: Path, skill_graph: Path) -> Path:
    """The real type-safety sidecar without the one field today's schema no longer declares."""
    state = json.loads((skill_graph / "comprehension-json" / "type-safety" / "audit-state.json").read_text())
    state.pop("application_verdict")
    skill_dir.mkdir(parents=True)
    path = skill_dir / "audit-state.json"
    path.write_text(json.dumps(state, indent=2))
    return path


def test_a_shallow_run_writes_a_sidecar_skill_graph_accepts(
    tmp_path: Path, skill_graph: Path, sidecar_schema: dict[str, Any]
) -> None:
    skill_dir = tmp_path / "skills" / "type-safety"
    path = _clean_sidecar(skill_dir, skill_graph)
    assert _errors(json.loads(path.read_text()), sidecar_schema) == []
    receipt = tmp_path / ".knowmeter" / "runs" / "r1" / "report.json"
    receipt.parent.mkdir(parents=True)
    receipt.write_text('{"report": 1}')
    verdict = ComprehensionVerdict.model_validate(skill_verdict(_stats(9, 10, 2), PARTIES))
    assert verdict.level == "SHALLOW"
    update = state_update(
        verdict,
        at="2026-11-27T11:00:00Z",
        runner="knowmeter comprehend (claude)",
        model=grader_model(GRADERS),
        receipt=receipt,
        skill_dir=skill_dir,
    )
    _, problems = write_state(path, update)
    written = json.loads(path.read_text())
    assert _errors(written, sidecar_schema) == [] and problems == []
    assert written["eval_failed_ids"] == ["10"]  # strings, as the schema wants
    assert written["eval_score"] == 4.5  # 9 of 10 cases: continuous, not rounded up to 5
    run = written["eval_last_run"]
    assert run["model"] == "openai:gpt-5"  # the grader's model, not the agent's
    assert run["receipt"] == "../../.knowmeter/runs/r1/report.json"  # relative to the skill's folder
    assert run["receipt_hash"] == hashlib.sha256(receipt.read_bytes()).hexdigest()
    assert run["status"] == "fail"


def test_a_non_llm_grader_leaves_the_model_out() -> None:
    assert (
        grader_model([GraderInfo(name="scripted-grader", executor="scripted-grader", model=None, non_llm=True)]) is None
    )


def test_the_authors_own_broken_fields_are_kept_and_named(
    tmp_path: Path, skill_graph: Path, sidecar_schema: dict[str, Any]
) -> None:
    """The real sidecar carries ``application_verdict``, which today's schema rejects: the field is
    the author's, so it is kept — and named — while every field --write-state sets validates."""
    skill_dir = tmp_path / "type-safety"
    skill_dir.mkdir()
    path = skill_dir / "audit-state.json"
    path.write_bytes((skill_graph / "comprehension-json" / "type-safety" / "audit-state.json").read_bytes())
    verdict = ComprehensionVerdict.model_validate(skill_verdict(_stats(10, 10, 2), PARTIES))
    update = state_update(verdict, at=None, runner="r", model=None, receipt=tmp_path / "r.json", skill_dir=skill_dir)
    _, problems = write_state(path, update)
    assert problems == ["additionalProperty: `application_verdict` is not declared in the audit-state schema"]
    errors = _errors(json.loads(path.read_text()), sidecar_schema)
    assert len(errors) == 1 and "application_verdict" in errors[0]


@pytest.mark.parametrize(
    ("shape", "schema_file"), [("v4", "v0.5.6-skill.v4.schema.json"), ("v6", "v0.5.6-skill.schema.json")]
)
def test_a_v4_or_v6_skill_gets_the_eval_fields_its_frontmatter_schema_has(
    tmp_path: Path, skill_graph: Path, shape: str, schema_file: str
) -> None:
    """No sidecar: the receipt goes into the SKILL.md frontmatter, as far as that shape's schema
    (Skill Graph v0.5.6) has fields for it; the written frontmatter validates against that schema
    and every other line of the file is kept."""
    import yaml

    from knowmeter.comprehension import frontmatter_update, write_frontmatter_state
    from knowmeter.skillgraph import load_skill

    folder = tmp_path / "skills" / "type-safety"
    folder.mkdir(parents=True)
    original = (skill_graph / "skills" / "type-safety" / "SKILL.md").read_text()
    if shape == "v6":
        original = original.replace("schema_version: 4\n", "schema_version: 6\n", 1)
    (folder / "SKILL.md").write_text(original)
    skill = load_skill(folder)
    assert skill.shape == shape
    receipt = tmp_path / "report.json"
    receipt.write_text("{}")
    verdict = ComprehensionVerdict.model_validate(skill_verdict(_stats(9, 10, 2), PARTIES))
    update = state_update(verdict, at=None, runner="r", model="openai:gpt-5", receipt=receipt, skill_dir=folder)
    fields = frontmatter_update(skill, update)
    assert list(fields) == (["eval_last_run"] if shape == "v4" else ["eval_score", "eval_failed_ids", "eval_last_run"])
    write_frontmatter_state(skill, fields)
    text = (folder / "SKILL.md").read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    schema = json.loads((skill_graph / "schemas" / schema_file).read_text())
    assert _errors(json.loads(json.dumps(front, default=str)), schema) == []
    assert front["eval_last_run"]["status"] == "fail" and front["eval_last_run"]["receipt"] == "../../report.json"
    if shape == "v6":
        assert (front["eval_score"], front["eval_failed_ids"]) == (4.5, ["10"])
    # only the written keys changed: the rest of the frontmatter and the whole body are kept
    added = [line for line in text.splitlines() if line not in original.splitlines()]
    assert [line.split(":")[0] for line in added] == list(fields)
    assert text.endswith(original.split("---\n", 2)[2])
    again = load_skill(folder)  # written twice: replaced in place, not duplicated
    write_frontmatter_state(again, fields)
    assert (folder / "SKILL.md").read_text().count("eval_last_run:") == 1
