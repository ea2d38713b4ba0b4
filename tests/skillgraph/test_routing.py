"""``*.routing.json`` (Skill Graph's routing evals) are named as routing files — input of the skill
activation evaluation — not refused as unknown by ``skill lint``; ``comprehend`` says in one line
that it does not run them (exit 2: it was asked to run something it does not run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.skillgraph import SkillFormatError, lint_paths, load_cases

ROUTING = {
    "skill_name": "skill-router",
    "kind": "routing_eval",
    "routing_cases": [
        {"id": 1, "query": {"triggers": ["fix the types"]}, "candidates": ["type-safety", "api-design"],
         "expected_winner": "type-safety", "expected_surface": "triggers", "reason": "a type question"}
    ],
}  # fmt: skip


@pytest.fixture
def routing(tmp_path: Path) -> Path:
    path = tmp_path / "examples" / "evals" / "skill-router.routing.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(ROUTING))
    return path


def test_lint_names_a_routing_file_and_exits_0(routing: Path) -> None:
    for given in (routing, routing.parent.parent.parent):  # the file, or a folder holding it
        result = lint_paths([given])
        assert result.routing_files == [routing] and result.unreadable == [] and result.eval_files == []
    run = CliRunner().invoke(cli, ["skill", "lint", str(routing)])
    assert run.exit_code == 0, run.output
    assert f"knowmeter: note: {routing}: a Skill Graph routing eval" in run.output
    assert "skill lint does not check it and comprehend does not run it" in run.output


def test_comprehend_does_not_run_a_routing_file_and_says_so(routing: Path, shared_dir: Path) -> None:
    with pytest.raises(SkillFormatError, match=r"a Skill Graph routing eval .* comprehend does not run it"):
        load_cases(routing)
    skill = shared_dir / "reference" / "skill-graph" / "skills" / "type-safety"
    run = CliRunner().invoke(cli, ["comprehend", str(skill), "--evals", str(routing), "--judge", "scripted-grader"])
    assert run.exit_code == 2
    line = run.output.strip().splitlines()[-1]
    assert line.startswith(f"knowmeter: error: {routing}:1: a Skill Graph routing eval")
    assert "comprehend does not run it; pass the skill's comprehension eval file" in line
