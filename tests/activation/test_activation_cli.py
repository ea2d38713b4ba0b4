"""``knowmeter activation`` end to end with the offline agent on the real Skill Graph skills:
figures with intervals, the A/B verdict and exit codes, activation.json against its schema,
and one line for bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from knowmeter.activation import ActivationReport, with_description
from tests.support.cli import km


def _report(out: Path) -> dict[str, Any]:
    (path,) = out.glob("activation/runs/*/activation.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_real_skill_graph_skill_with_its_siblings_as_distractors(tmp_path: Path, sg_skills: Path) -> None:
    r = km(
        "activation",
        str(sg_skills / "debugging"),
        "--distractor",
        "documentation",
        "--distractor",
        "a11y",
        "--output-dir",
        "out",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("SOLO — activation of skill 'debugging': 7 case(s) × 3 repeat(s), offline")
    assert "recall                 0.75 [" in r.stdout and "false-activation rate  0.00 [" in r.stdout
    assert "✗ examples-2: should fire, fired 0/3" in r.stdout
    data = _report(tmp_path / "out")
    ActivationReport.model_validate(data)
    arm = data["arms"][0]
    assert (arm["recall"]["successes"], arm["recall"]["trials"], arm["recall"]["cases"]) == (9, 12, 4)
    assert data["distractors"] == ["a11y", "documentation"] and data["counts"] == "either"
    # each task saw only its own skills, delivered as skills; every trial is stored with how it fired
    records = [json.loads(line) for line in next((tmp_path / "out").glob("activation/runs/*/results.jsonl")).open()]
    assert len(records) == 21 and all("activation" in rec for rec in records)
    fired = [rec for rec in records if rec["activation"]["order"]]
    assert fired and all(rec["activation"]["skill_tool"][rec["activation"]["order"][0]] for rec in fired)


def test_description_ab_gives_a_verdict_and_its_exit_code(tmp_path: Path, sg_skills: Path) -> None:
    cases = tmp_path / "cases.yaml"
    positives = [f"my test {w} fails after the deploy" for w in ("suite", "build", "job", "run", "check", "step")]
    negatives = [f"write a {w} guide for new readers" for w in ("setup", "style", "api", "usage", "deploy", "ops")]
    cases.write_text(
        "cases:\n"
        + "".join(f"  - {{id: p{i}, prompt: '{p}', should_trigger: true}}\n" for i, p in enumerate(positives))
        + "".join(f"  - {{id: n{i}, prompt: '{p}', should_trigger: false}}\n" for i, p in enumerate(negatives))
    )
    vague = "Use when behaviour is broken."
    skill = tmp_path / "dbg"
    skill.mkdir()
    text = (sg_skills / "debugging" / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(with_description(skill, text, vague))
    better = "Use when a test fails after a deploy or build. Do NOT use for writing a guide for readers."
    r = km(
        "activation",
        "dbg",
        "--cases",
        "cases.yaml",
        "--description",
        better,
        "--repeat",
        "2",
        "--output-dir",
        "out",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("PROGRESS") and "recall +100.0 pts" in r.stdout
    # the other way round it is a regression
    (skill / "SKILL.md").write_text(with_description(skill, text, better))
    r = km(
        "activation",
        "dbg",
        "--cases",
        "cases.yaml",
        "--description",
        vague,
        "--repeat",
        "2",
        "--output-dir",
        "out2",
        cwd=tmp_path,
    )
    assert r.returncode == 1 and r.stdout.startswith("REGRESS")


def test_schema_file_is_the_models_schema_and_docs_print_it(tmp_path: Path) -> None:
    from knowmeter.schemas import as_text, shipped_text

    assert shipped_text("activation") == as_text(ActivationReport.model_json_schema())
    r = km("docs", "--schema", "activation", cwd=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["title"] == "ActivationReport"


def test_report_validates_against_the_published_schema(tmp_path: Path, sg_skills: Path) -> None:
    from knowmeter.activation._model import schema_path

    km("activation", str(sg_skills / "a11y"), "--output-dir", "out", cwd=tmp_path)
    jsonschema.validate(_report(tmp_path / "out"), json.loads(schema_path().read_text()))


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, sg_skills: Path) -> None:
    (tmp_path / "c.yaml").write_text("- {id: a, prompt: x, should_trigger: true, distractors: [nowhere]}\n")
    r = km("activation", str(sg_skills / "a11y"), "--cases", "c.yaml", "--output-dir", "out", cwd=tmp_path)
    assert r.returncode == 2
    assert "c.yaml: case 'a': distractor 'nowhere' not found" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = km("activation", str(sg_skills / "a11y"), "--executor", "openai", cwd=tmp_path)
    assert r.returncode == 2 and "it has no skills mechanism to measure" in r.stderr
    r = km("activation", str(sg_skills / "a11y"), "--executor", "codex", "--counts", "skill-tool", cwd=tmp_path)
    assert r.returncode == 2 and "codex has no Skill tool" in r.stderr
    r = km("activation", str(sg_skills / "a11y"), "--executor", "claude", "-O", "tools=Read,Bash", cwd=tmp_path)
    assert r.returncode == 2 and "-O tools=Read,Bash: without the Skill tool" in r.stderr


def test_routing_cases_with_real_skill_graph_candidates(tmp_path: Path, sg_skills: Path) -> None:
    def case(cid: str, trigger: str, candidates: list[str], winner: str, *keywords: str) -> dict[str, Any]:
        query = {"triggers": [trigger], "keywords": list(keywords)}
        return {"id": cid, "query": query, "candidates": candidates, "expected_winner": winner}

    cases = [
        case("fail-ci", "my tests pass locally but fail in CI", ["debugging", "documentation"], "debugging"),
        case(
            "readme",
            "the README has drifted from the actual CLI flags",
            ["debugging", "documentation"],
            "documentation",
        ),
        case("modal", "this modal is keyboard-trapped, users cannot Escape", ["a11y", "debugging"], "a11y", "focus"),
        case("nil-panic", "find the root cause of this nil panic", ["debugging", "a11y", "documentation"], "debugging"),
        case("labels", "add labels to these form fields", ["a11y", "documentation"], "a11y"),
    ]
    (tmp_path / "router.routing.json").write_text(json.dumps({"kind": "routing_eval", "routing_cases": cases}))
    r = km(
        "activation",
        str(sg_skills / "debugging"),
        "--cases",
        "router.routing.json",
        "--output-dir",
        "out",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    arm = _report(tmp_path / "out")["arms"][0]
    # the offline agent misses "root cause" (the description says "root-cause"): nothing is loaded there
    assert (arm["recall"]["successes"], arm["recall"]["trials"]) == (3, 6)
    assert (arm["routing_top1"]["successes"], arm["routing_top1"]["trials"], arm["routing_top1"]["cases"]) == (9, 12, 4)
    assert [(c["case_id"], c["top1_misses"]) for c in arm["confusion"]] == [("nil-panic", 3)]
    assert "note: 1 routing case(s) left out: 'debugging' is not among their candidates (labels)" in r.stdout


def test_resume_runs_only_the_missing_tasks_and_refuses_changed_cases(tmp_path: Path, sg_skills: Path) -> None:
    shutil.copytree(sg_skills / "a11y", tmp_path / "a11y")
    first = km("activation", "a11y", "--output-dir", "out", "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (results,) = (tmp_path / "out").glob("activation/runs/*/results.jsonl")
    lines = results.read_text().splitlines()
    results.write_text("\n".join(lines[:7]) + "\n")  # as if killed after 7 of 18 tasks
    r = km("activation", "--resume", "latest", "--output-dir", "out", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "11 of 18 tasks left" in r.stderr
    assert len(results.read_text().splitlines()) == 18
    again = json.loads(r.stdout)
    before = json.loads(first.stdout)
    assert again["arms"] == before["arms"] and again["run_id"] == before["run_id"]
    skill_md = tmp_path / "a11y" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("examples:\n", "examples:\n  - a new prompt\n", 1))
    r = km("activation", "--resume", "latest", "--output-dir", "out", cwd=tmp_path)
    assert r.returncode == 2 and "the sample set changed since the run started" in r.stderr
    r = km("activation", "--output-dir", "out", cwd=tmp_path)
    assert r.returncode == 2 and "activation needs a SKILL" in r.stderr


def test_trends_compare_only_runs_on_the_same_cases(tmp_path: Path, sg_skills: Path) -> None:
    skill = str(sg_skills / "debugging")
    (tmp_path / "few.yaml").write_text("- {id: a, prompt: my test fails in CI, should_trigger: true}\n")
    for extra in ((), ("--repeat", "1"), ("--cases", "few.yaml")):
        assert km("activation", skill, *extra, "--output-dir", "out", cwd=tmp_path).returncode == 0
    runs = sorted((tmp_path / "out" / "activation" / "runs").iterdir())
    (runs[0] / "activation.json").write_text("{")  # damaged: skipped and counted
    r = km("activation", "--trends", "--output-dir", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    blocks = [line for line in r.stdout.splitlines() if line.startswith("skill ")]
    assert len(blocks) == 2 and all("(1 run(s))" in b for b in blocks)
    assert f"  {runs[1].name} A: recall 0.75 [" in r.stdout and f"  {runs[2].name} A: recall 1.00 [" in r.stdout
    assert r.stdout.rstrip().endswith("1 run(s) without a readable activation.json were skipped")


def test_python_api_is_the_command(tmp_path: Path, sg_skills: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import knowmeter

    monkeypatch.chdir(tmp_path)
    report = knowmeter.measure_activation(sg_skills / "a11y", output_dir="out")
    assert report.verdict == "SOLO" and report.repeats == 3
    assert (report.arms[0].recall.successes, report.arms[0].recall.trials) == (9, 12)
    assert _report(tmp_path / "out") == report.model_dump(mode="json")


def test_a_changed_label_or_distractor_is_a_new_case_set(tmp_path: Path, sg_skills: Path) -> None:
    cases = tmp_path / "c.yaml"
    shas = []
    for text in (
        "- {id: a, prompt: my test fails, should_trigger: true, distractors: [documentation]}\n",
        "- {id: a, prompt: my test fails, should_trigger: false, distractors: [documentation]}\n",
        "- {id: a, prompt: my test fails, should_trigger: false, distractors: [a11y]}\n",
    ):
        cases.write_text(text)
        r = km(
            "activation",
            str(sg_skills / "debugging"),
            "--cases",
            "c.yaml",
            "--json",
            "--output-dir",
            "out",
            cwd=tmp_path,
        )
        shas.append(json.loads(r.stdout)["case_set"]["sha256"])
    assert len(set(shas)) == 3


def test_report_rebuilds_from_stored_results_alone(tmp_path: Path, sg_skills: Path) -> None:
    first = km("activation", str(sg_skills / "a11y"), "--output-dir", "out", "--json", cwd=tmp_path)
    (run,) = (tmp_path / "out" / "activation" / "runs").iterdir()
    (run / "activation.json").unlink()
    (run / "activation.html").unlink()
    r = km("activation", "--report", "latest", "--output-dir", "out", "--json", cwd=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout) == json.loads(first.stdout)
    assert (run / "activation.html").is_file()
    r = km("activation", "--report", "nope", "--output-dir", "out", cwd=tmp_path)
    assert r.returncode == 2 and "run 'nope' not found" in r.stderr
