"""Issue 30 point 12: what users of promptfoo / Inspect reach for first — a blank starter for
their own skill (``init --blank``), one sample in the terminal (``show RUN SAMPLE``) and the
per-sample results as CSV (``--csv``)."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
import yaml

from knowmeter.report import read_report
from tests.support.cli import init_demo, km


def test_init_blank_writes_a_starter_for_ones_own_skill_not_the_demo(tmp_path: Path) -> None:
    r = km("init", "--blank", "mine", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    project = tmp_path / "mine"
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert files == [
        "eval-samples.yaml",
        "eval.schema.json",
        "eval.yaml",
        "kb/README.md",
        "samples.schema.json",
        "skills/my-skill/SKILL.md",
    ]
    config = yaml.safe_load((project / "eval.yaml").read_text())
    assert config["executor"] == "claude" and [v["artifact"] for v in config["variants"]] == ["baseline", "my-skill"]
    assert all(v["cwd"] == "kb" for v in config["variants"])  # the agent never sees the samples
    assert "knowmeter eval" in r.stdout and "--executor offline" in r.stdout


@pytest.mark.slow
def test_the_blank_starter_runs_as_it_is(tmp_path: Path) -> None:
    assert km("init", "--blank", "mine", cwd=tmp_path).returncode == 0
    r = km("eval", "--executor", "offline", "--json", cwd=tmp_path / "mine")
    assert r.returncode == 1, r.stderr  # two samples decide nothing, but every file loads and runs
    report = json.loads(r.stdout)
    assert report["decision"]["outcome"] == "UNDERPOWERED" and report["run"]["tasks_done"] == 12


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo, evaluated with a script judge, with its CSV written."""
    project = init_demo(tmp_path_factory.mktemp("reach") / "demo")
    (project / "judge.py").write_text(
        "import json, sys\njson.load(sys.stdin)\n"
        'print(json.dumps({"output": json.dumps({"reasoning": "cites the refund policy", "score": 4, '
        '"reason": "ok"})}))\n'
    )
    r = km("eval", "--judge", f"{sys.executable} judge.py:m", "--csv", "results.csv", cwd=project)
    assert r.returncode == 0, r.stderr
    return project


@pytest.mark.slow
def test_show_prints_one_samples_answers_grades_and_trace(judged: Path) -> None:
    r = km("show", "latest", "refund-window", "--variant", "support-expert", cwd=judged, env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("sample refund-window · run ")
    assert lines[1] == "prompt: I bought a plan 3 weeks ago, can I still get my money back?"
    text = r.stdout
    assert "support-expert · treatment · repeat 0 · composite " in text and "support-basic" not in text
    assert "✓ tool_input_contains [behavior]: 1 call to Read with 'knowledge/refunds.md' in the input" in text
    assert "judge " in text and "4.00 — cites the refund policy" in text
    assert '→ Read {"file_path": "knowledge/refunds.md"}' in text and "← success: " in text
    both = km("show", "latest", "refund-window", cwd=judged)
    assert "support-basic · control" in both.stdout and "support-expert · treatment" in both.stdout


@pytest.mark.slow
def test_show_names_the_nearest_sample_for_a_typo(judged: Path) -> None:
    r = km("show", "latest", "refund-windw", cwd=judged)
    assert r.returncode == 2 and "no sample 'refund-windw' (did you mean refund-window?)" in r.stderr
    r = km("show", "latest", "refund-window", "--variant", "nope", cwd=judged)
    assert r.returncode == 2 and "has no variant 'nope' (its variants: support-basic, support-expert)" in r.stderr


@pytest.mark.slow
def test_csv_holds_a_row_per_task_with_the_reports_numbers(judged: Path) -> None:
    rows = list(csv.DictReader(io.StringIO((judged / "results.csv").read_text(encoding="utf-8"))))
    [run] = (judged / ".knowmeter" / "runs").iterdir()
    report = read_report(run / "report.json", run.name)
    tasks = {(t.sample_id, t.variant): t for t in report.tasks or []}
    assert len(rows) == len(tasks) == 46
    for row in rows:
        task = tasks[(row["sample_id"], row["variant"])]
        grade = task.stored()["grade"]
        assert grade is not None and float(row["composite"]) == pytest.approx(grade["composite"])
        assert float(row["judge"]) == 4.0 and row["role"] in ("control", "treatment")
        assert row["output"] == task.stored()["exec"]["output"]
        assert row["agent_cost_usd"] == "0.0"  # the offline agent costs nothing
    # report writes the same file
    again = km("report", "latest", "--csv", "again.csv", cwd=judged)
    assert again.returncode == 0 and (judged / "again.csv").read_text() == (judged / "results.csv").read_text()


def test_a_formula_in_an_answer_is_not_run_by_a_spreadsheet() -> None:
    from knowmeter.report._csv import _text

    assert _text("=HYPERLINK(evil)") == "'=HYPERLINK(evil)" and _text("-1+1") == "'-1+1"
    assert _text("Refunds within 30 days") == "Refunds within 30 days" and _text(None) == ""
