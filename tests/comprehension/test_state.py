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
