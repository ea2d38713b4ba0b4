"""The offline demo's comprehension example: runs with no keys, labels its deterministic agent and
grader, and catches the offline agent's verbatim copying (C1)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from knowmeter.cli._init import COMPREHENSION_DEMO


def km(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knowmeter", *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow
def test_demo_comprehension_example_runs_offline(tmp_path: Path) -> None:
    init = km("init", "demo", cwd=tmp_path)
    assert init.returncode == 0 and COMPREHENSION_DEMO in init.stdout
    demo = tmp_path / "demo"
    lint = km(
        "skill",
        "lint",
        "comprehension/skills/refund-policy/SKILL.md",
        "comprehension/evals/refund-policy.json",
        cwd=demo,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    r = km("comprehend", *shlex.split(COMPREHENSION_DEMO), "--json", cwd=demo)
    assert r.returncode == 1, r.stderr  # the offline agent copies: SHALLOW
    report = json.loads(r.stdout)
    comp = report["comprehension"]
    assert report["run"]["executor"]["non_llm"] is True and comp["graders"][0]["non_llm"] is True
    assert any("deterministic scripted grader" in c for c in comp["verdict"]["caveats"])
    assert any("deterministic offline agent" in c for c in comp["verdict"]["caveats"])
    assert comp["verdict"]["level"] == "SHALLOW" and "C1" in comp["verdict"]["failing_dimensions"]
    case3 = next(c for c in comp["cases"] if c["case_id"] == "3")
    assert case3["derived_behaviors"] == case3["behaviors"] and len(case3["behaviors"]) == 4  # no file behaviors
    text = km("comprehend", *shlex.split(COMPREHENSION_DEMO), cwd=demo).stdout
    assert "agent: offline — deterministic offline agent, not an LLM" in text
    assert "grader: scripted-grader — deterministic scripted grader, not an LLM" in text


def test_demo_comprehension_through_the_python_api(tmp_path: Path) -> None:
    """``knowmeter.comprehend`` is the command's run: the same verdict and decision, stored; a
    resume of the finished run runs nothing and decides alike."""
    import knowmeter
    from knowmeter.demo import scaffold

    scaffold(tmp_path / "demo")
    report = knowmeter.comprehend(
        "comprehension/skills/refund-policy/SKILL.md",
        evals="comprehension/evals/refund-policy.json",
        judges=["scripted-grader"],
        base_dir=tmp_path / "demo",
    )
    assert report.comprehension is not None and report.comprehension.verdict.level == "SHALLOW"
    assert report.decision is not None and (report.decision.outcome, report.exit_code) == ("SHALLOW", 1)
    again = knowmeter.resume(report.run.id, output_dir=tmp_path / "demo" / ".knowmeter")
    assert again.decision == report.decision and again.run.tasks_done == report.run.tasks_done
