"""Skill Graph's verdict levels as its schema defines them, and the third eval format: ``NA`` for a
skill with no comprehension eval file (recorded by ``--write-state``; nothing is run), and
``skills/<name>/evals/evals.json`` (the A/B format: a task and its ``expectations``) graded on
its expectations as the README says, not refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.comprehension import load_inputs

EVALS_JSON = {
    "skill_name": "type-safety",
    "evals": [
        {"id": "ab-1", "prompt": "Type the JSON body of a third-party webhook.",
         "expectations": ["Parses the body with a runtime validator before trusting the type",
                          "Uses unknown rather than any for the raw value"]},
        {"id": "ab-2", "prompt": "Should an `as User` cast count as validation?",
         "expectations": ["Says a cast is a compile-time claim, not a runtime check"]},
    ],
}  # fmt: skip


def _skill(tmp_path: Path, skill_graph: Path) -> Path:
    folder = tmp_path / "skills" / "type-safety"
    folder.mkdir(parents=True)
    shutil.copy(skill_graph / "skills" / "type-safety" / "SKILL.md", folder / "SKILL.md")
    return folder


def test_an_evals_json_file_is_graded_on_its_expectations(tmp_path: Path, skill_graph: Path) -> None:
    folder = _skill(tmp_path, skill_graph)
    (folder / "evals").mkdir()
    (folder / "evals" / "evals.json").write_text(json.dumps(EVALS_JSON))
    inputs = load_inputs(folder / "SKILL.md", None, n=6)  # found beside the skill, as the README says
    assert inputs.case_file.format == "evals-json" and [c.case_id for c in inputs.cases] == ["ab-1", "ab-2"]
    first = inputs.cases[0]
    assert first.dimension == "C8" and first.application == "scenario"
    assert [b.description for b in first.behaviors] == EVALS_JSON["evals"][0]["expectations"]  # type: ignore[index]
    assert not any(b.derived for b in first.behaviors)


def test_no_eval_file_is_na_recorded_by_write_state_and_nothing_runs(tmp_path: Path, skill_graph: Path) -> None:
    folder = _skill(tmp_path, skill_graph)
    sidecar = json.loads((skill_graph / "comprehension-json" / "type-safety" / "audit-state.json").read_text())
    sidecar.pop("application_verdict")
    (folder / "audit-state.json").write_text(json.dumps(sidecar, indent=2))
    result = CliRunner().invoke(
        cli,
        ["comprehend", str(folder), "--judge", "scripted-grader", "--write-state", "--output-dir", str(tmp_path / "o")],
    )
    assert result.exit_code == 2, result.output
    assert "comprehension_verdict UNVERIFIED → NA (the skill has no comprehension eval file)" in result.output
    assert "nothing to measure — Skill Graph's comprehension_verdict NA" in result.output
    written: dict[str, Any] = json.loads((folder / "audit-state.json").read_text())
    assert written == {**sidecar, "comprehension_verdict": "NA"}
    schema = json.loads((skill_graph / "schemas" / "head-skill-audit-state.schema.json").read_text())
    jsonschema.validate(written, schema)
    assert not (tmp_path / "o").exists()  # no run was made
