"""``eval --control-run RUN`` on the offline demo: a matching stored control stands in for the
control arm (paired by sample and repeat, the report says from which run and when); a run whose
fingerprint differs, or that lacks some control tasks, is refused with the differing fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from knowmeter.cli import cli
from knowmeter.exit_codes import EXIT_INPUT, EXIT_OK
from knowmeter.report import joined_report
from knowmeter.store import iter_results


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200"}, catch_exceptions=False)


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    assert run("init", "d").exit_code == 0
    monkeypatch.chdir(tmp_path / "d")
    assert run("eval", "-q").exit_code == EXIT_OK
    return tmp_path / "d"


def _runs(demo: Path) -> list[Path]:
    return sorted((demo / ".knowmeter" / "runs").iterdir())


@pytest.mark.slow
def test_a_matching_control_is_reused_and_paired(demo: Path) -> None:
    (source,) = _runs(demo)
    r = run("eval", "--control-run", source.name)
    assert r.exit_code == EXIT_OK, r.output
    assert r.stdout.startswith("PROGRESS · support-expert vs support-basic")
    new = _runs(demo)[-1]
    before = {rec["task_id"]: rec for rec in iter_results(source / "results.jsonl") if rec["role"] == "control"}
    after = {rec["task_id"]: rec for rec in iter_results(new / "results.jsonl") if rec["role"] == "control"}
    assert after == before  # the stored control records, as they were: not run again
    record = json.loads((new / "run.json").read_text(encoding="utf-8"))
    assert record["control_reused"]["run"] == source.name and record["control_reused"]["tasks"] == 23
    report = joined_report(new)
    assert report["run"]["control_reused"]["created_at"] == json.loads((source / "run.json").read_text())["created_at"]
    assert report["comparisons"][0]["metrics"]["composite"]["n_pairs"] == 23
    assert f"control reused: 23 control result(s) from run {source.name} (made " in flat(r.stdout)


@pytest.mark.slow
def test_a_different_control_artifact_or_setting_is_refused(demo: Path) -> None:
    (source,) = _runs(demo)
    r = run("eval", "--control-run", source.name, "--timeout", "33")
    assert r.exit_code == EXIT_INPUT
    assert "these differ: setting timeout_s (300.0 there, 33.0 here)" in flat(r.output)
    skill = demo / "skills" / "support-basic" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    r = run("eval", "--control-run", source.name)
    assert r.exit_code == EXIT_INPUT and "these differ: control artifact hash" in flat(r.output)
    assert _runs(demo) == [source]  # a refusal stores no run


@pytest.mark.slow
def test_a_changed_workspace_is_refused(demo: Path) -> None:
    """The control artifact is the same but the variants' workspace (cwd) changed — a knowledge
    base the agent reads there: its content hash is in run.json and in the fingerprint."""
    (source,) = _runs(demo)
    stored = json.loads((source / "run.json").read_text(encoding="utf-8"))
    assert all(len(v["cwd_hash"]) == 64 for v in stored["variants"])  # the demo's variants run in workspace/
    (demo / "workspace" / "knowledge" / "new-policy.md").write_text("Refunds take 90 days.\n", encoding="utf-8")
    r = run("eval", "--control-run", source.name)
    assert r.exit_code == EXIT_INPUT
    assert "these differ: control workspace (cwd) content hash" in flat(r.output)
    (demo / "workspace" / "knowledge" / "new-policy.md").unlink()
    assert run("eval", "-q", "--control-run", source.name).exit_code == EXIT_OK  # the same content again


@pytest.mark.slow
def test_a_run_without_every_control_task_is_refused(demo: Path) -> None:
    (source,) = _runs(demo)
    r = run("eval", "--control-run", source.name, "--repeat", "2")
    assert r.exit_code == EXIT_INPUT
    assert "23 of this run's 46 control tasks have no result there" in flat(r.output)


@pytest.mark.slow
def test_a_reused_control_with_sequential_looks_runs_only_the_treatment_and_stops_early(demo: Path) -> None:
    """Each batch runs only the treatment's tasks of its samples; each look pairs them with the
    stored control; the early stop counts the reused control in the tasks stored."""
    (source,) = _runs(demo)
    r = run("eval", "--control-run", source.name, "--sequential-design", "obf")
    assert r.exit_code == EXIT_OK, r.output
    assert "sequential: stopped early after 20 of 23 samples" in flat(r.stdout)
    new = _runs(demo)[-1]
    records = list(iter_results(new / "results.jsonl"))
    assert sum(rec["role"] == "control" for rec in records) == 23  # all reused, none run
    assert sum(rec["role"] == "treatment" for rec in records) == 20
    record = json.loads((new / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "complete" and record["tasks_total"] == 43
    assert record["control_reused"]["run"] == source.name
    report = json.loads((new / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"]["level"] == "PROGRESS"
    assert report["comparisons"][0]["metrics"]["composite"]["n_pairs"] == 20


@pytest.mark.slow
def test_the_ci_recipe_control_once_then_treatment_only(demo: Path) -> None:
    """The README's CI pattern: a control-only run (on the main branch), then each pull request
    runs only its treatment against it."""
    assert run("eval", "-q", "--control", "support-basic").exit_code != EXIT_INPUT
    control_only = _runs(demo)[-1]
    r = run("eval", "-q", "--control", "support-basic", "--treatment", "support-expert", "--control-run", "latest")
    assert r.exit_code == EXIT_OK and r.stdout.startswith("PROGRESS · ")
    record = json.loads((_runs(demo)[-1] / "run.json").read_text(encoding="utf-8"))
    assert record["control_reused"]["run"] == control_only.name
