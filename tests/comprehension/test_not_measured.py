"""Issue 30 point 6: a comprehension run in which nothing was measured (every agent call failed)
prints no verdict — no "verdict: SHALLOW", no eval_score 0/5, no FAIL per case — but its outcome,
why, and what to do; the exit code is the decision's."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.cli import km_process

pytestmark = pytest.mark.slow

FAILING_AGENT = "import sys\nsys.stderr.write('no API key\\n')\nsys.exit(1)\n"


def test_nothing_measured_prints_no_verdict(tmp_path: Path, skill_graph: Path) -> None:
    skill = tmp_path / "skills" / "type-safety"
    skill.mkdir(parents=True)
    shutil.copy(skill_graph / "skills" / "type-safety" / "SKILL.md", skill / "SKILL.md")
    (tmp_path / "agent.py").write_text(FAILING_AGENT)
    evals = skill_graph / "evals" / "type-safety.json"
    agent = f"{sys.executable} {tmp_path / 'agent.py'}"
    r = km_process(
        "comprehend", str(skill), "--evals", str(evals), "--judge", "scripted-grader",
        "--executor", agent, "--retry", "0", cwd=tmp_path,
    )  # fmt: skip
    report = json.loads(next((tmp_path / ".knowmeter" / "runs").glob("*/report.json")).read_text())
    assert report["decision"]["outcome"] == "NOT MEASURED"
    assert r.returncode == report["decision"]["exit_code"] == 1, r.stderr
    out = r.stdout
    assert "outcome: NOT MEASURED · exit code 1" in out
    # the run stops once its first tasks all failed the same way (--max-errors' default): each one errored
    done = report["run"]["tasks_done"]
    assert report["run"]["status"] == "halted" and f"{done} of {done} tasks errored" in out
    assert "no verdict, no eval_score: nothing about the skill was measured" in out
    assert "recommendation: FIX THE RUN — nothing was measured" in out
    for misleading in ("verdict:", "eval_score 0", ": FAIL —", "named exceptions"):
        assert misleading not in out, out
