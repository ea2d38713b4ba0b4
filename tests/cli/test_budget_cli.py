"""What the budget could not do reaches every summary (terminal, ``report``, Markdown, JUnit):
a total exceeded by a call whose cost was known only afterwards, a total that could not bind
because no call reported its cost, calls kept one at a time. A resumed run keeps one budget. A
run the budget stopped before any task finished is INCOMPLETE, and a free agent is never
refused. Real script agents through the real command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
import yaml

from knowmeter import Listener, evaluate
from knowmeter.runner import Budget
from knowmeter.store import TaskRecord
from tests.support.cli import Ran, init_demo, km

#: The first call costs $0.01, every later one $0.40 (a model whose cost rises mid-run).
RISING = """\
import fcntl, json, sys
sys.stdin.read()
with open(sys.argv[1], "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX); f.seek(0); n = len(f.read()); f.write("x")
print(json.dumps({"output": "30 days", "costUSD": 0.01 if n == 0 else 0.4}))
"""

#: Answers without reporting a cost (``costUSD`` absent) — or with a fixed one, given as argv[1].
AGENT = """\
import json, sys
sys.stdin.read()
reply = {"output": "Refunds are possible within 30 days."}
if len(sys.argv) > 1:
    reply["costUSD"] = float(sys.argv[1])
print(json.dumps(reply))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The demo project cut to 4 samples (8 tasks), with the two agents beside it."""
    demo = init_demo(tmp_path / "d")
    samples = demo / "eval-samples.yaml"
    data = yaml.safe_load(samples.read_text())
    data["samples"] = data["samples"][:4]
    samples.write_text(yaml.safe_dump(data, sort_keys=False))
    (demo / "rising.py").write_text(RISING)
    (demo / "agent.py").write_text(AGENT)
    return demo


def _eval(project: Path, agent: str, *flags: str) -> Ran:
    """``knowmeter eval`` of the project with the script agent ``agent`` (its file and arguments)."""
    return km("eval", "--executor", f"{sys.executable} {project / agent}", "--no-cache", *flags, cwd=project)


def _stored(demo: Path) -> Any:
    [run] = (demo / ".knowmeter" / "runs").iterdir()
    return json.loads((run / "report.json").read_text())


def test_an_exceeded_budget_is_said_everywhere_and_a_resume_keeps_one_budget(project: Path) -> None:
    first = _eval(project, f"rising.py {project / 'count'}", "--budget-usd", "0.5", "--junit", "j.xml")
    assert first.returncode == 1, first.stderr
    report = _stored(project)
    run, budget = report["run"]["id"], report["run"]["budget"]
    assert budget["overshoot_usd"] > 0 and budget["spent_known_usd"] > 0.5
    exceeded = f"⚠ budget $0.5 exceeded: ${budget['spent_known_usd']:.4f} spent"
    assert exceeded in first.stdout
    assert report["decision"]["outcome"] == "INCOMPLETE"
    advice = f"knowmeter eval --resume {run} --budget-usd TOTAL (above the ${budget['spent_known_usd']:.4f}"
    assert advice in " ".join(first.stdout.split())
    # issue 30 point 11: and an estimate of the total the whole run needs
    whole = budget["spent_known_usd"] / report["run"]["tasks_done"] * report["run"]["tasks_total"]
    assert f"the whole run needs about ${whole:.4f})" in " ".join(first.stdout.split())
    outcome_case = ET.parse(project / "j.xml").getroot().find(".//testcase[@classname='knowmeter.outcome']")
    assert outcome_case is not None and exceeded in (outcome_case.findtext("system-out") or "")
    again = km("report", run, "--markdown", "m.md", cwd=project)
    assert exceeded in again.stdout
    assert "⚠ budget $0.5 exceeded" in (project / "m.md").read_text()

    # the spend of the first leg counts: a resume on the same total starts nothing
    spent_before = budget["spent_known_usd"]
    stopped = km("eval", "--resume", run, cwd=project)
    assert stopped.returncode == 1, stopped.stderr
    budget = _stored(project)["run"]["budget"]
    assert (
        budget["spent_known_usd"] == spent_before
        and budget["calls"]["agent"]["known_cost"] == report["run"]["tasks_done"]
    )
    # a larger total finishes the run; the record adds up over both legs
    finished = km("eval", "--resume", run, "--budget-usd", "10", cwd=project)
    assert "budget" not in finished.stderr, finished.stderr
    report = _stored(project)
    budget = report["run"]["budget"]
    assert report["run"]["status"] == "complete" and report["run"]["tasks_done"] == 8
    assert budget["total_usd"] == 10 and budget["calls"]["agent"]["known_cost"] == 8
    assert budget["spent_known_usd"] == pytest.approx(sum(v["cost"]["known_usd"] for v in report["variants"]))
    assert budget["spent_known_usd"] == pytest.approx(0.01 + 7 * 0.4)
    assert budget["overshoot_usd"] is None and "exceeded" not in finished.stdout


def test_a_budget_over_unknown_costs_says_it_could_not_bind(project: Path) -> None:
    r = _eval(project, "agent.py", "--budget-usd", "0.35", "--concurrency", "4", "--markdown", "m.md")
    lines = [
        "⚠ budget $0.35 could not be enforced: none of the 8 model call(s) reported its cost",
        "⚠ budget $0.35: 8 model call(s) ran one at a time, not 4 at once",
    ]
    flat = " ".join(r.stdout.split())
    markdown = " ".join((project / "m.md").read_text().split())
    for line in lines:
        assert line in flat and line in markdown
    assert _stored(project)["run"]["budget"]["calls_one_at_a_time"] == 8


class _Watch(Listener):
    """Notes, as each task finishes, whether the run's budget still keeps calls one at a time."""

    def __init__(self) -> None:
        self.alone: list[bool] = []
        self.budget: Budget | None = None

    def executing(self, budget: Budget) -> None:
        self.budget = budget

    def record(self, record: TaskRecord) -> None:
        assert self.budget is not None
        self.alone.append(self.budget.one_at_a_time_now)


@pytest.mark.parametrize(("agent", "alone"), [("agent.py 0.01", [False] * 8), ("agent.py", [True] * 8)])
def test_a_listener_hears_whether_the_budget_keeps_calls_one_at_a_time(
    project: Path, agent: str, alone: list[bool]
) -> None:
    """What the live progress line shows: once a cost is known calls run at once; while none is
    reported, the budget keeps every call alone to the end."""
    watch = _Watch()
    evaluate(
        project,
        listener=watch,
        executor=f"{sys.executable} {project / agent}",
        no_cache=True,
        budget_usd=5.0,
        concurrency=4,
    )
    assert watch.alone == alone


def test_a_budget_that_held_is_silent(project: Path) -> None:
    r = _eval(project, "agent.py 0.01", "--budget-usd", "5")
    assert r.returncode in (0, 1) and "⚠ budget" not in r.stdout  # known costs, under the total: nothing to say
    assert _stored(project)["run"]["budget"]["calls_one_at_a_time"] == 1  # only the first call, to learn its cost


def test_a_run_the_budget_stopped_before_any_task_is_incomplete(project: Path) -> None:
    r = _eval(project, "agent.py 0.01", "--budget-usd", "0")
    assert r.returncode == 1
    assert r.stdout.startswith("INCOMPLETE · 0/8 tasks — stopped by the budget: 8 task(s) not started")
    assert "fix the executor errors" not in r.stdout and "NOT MEASURED" not in r.stdout
    assert "NOT DECIDED — the run is incomplete (0/8 tasks); finish it with knowmeter eval --resume" in " ".join(
        r.stdout.split()
    )
    assert "0/8 tasks · stopped, 8 not run · failed 0" in r.stderr  # the last progress line: nothing runs


def test_a_free_agent_is_not_refused_by_a_budget_of_zero(project: Path) -> None:
    r = km("eval", "--no-cache", "--budget-usd", "0", cwd=project)  # the offline demo agent: no model
    report = _stored(project)
    assert report["run"]["status"] == "complete" and report["run"]["tasks_done"] == 8, r.stdout
    assert report["run"]["budget"]["spent_known_usd"] == 0 and "⚠ budget" not in r.stdout


def test_results_the_report_did_not_count_are_warned_of(project: Path) -> None:
    assert km("eval", "-q", "--no-cache", cwd=project).returncode in (0, 1)
    [run] = (project / ".knowmeter" / "runs").iterdir()
    results = run / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join([*lines, lines[0]]))
    r = km("report", run.name, "--markdown", "m.md", cwd=project)
    assert "⚠ results.jsonl: 1 duplicate" in r.stdout
    assert "⚠ results.jsonl: 1 duplicate" in (project / "m.md").read_text()


def test_a_comprehension_run_learns_its_graders_cost_and_then_runs_at_full_concurrency(project: Path) -> None:
    grader = Path(__file__).parents[1] / "comprehension" / "grader_script.py"
    r = km(
        "comprehend",
        *("comprehension/skills/refund-policy", "--evals", "comprehension/evals/refund-policy.json"),
        *(
            "--executor",
            f"{sys.executable} {project / 'agent.py'} 0.01",
            "--judge",
            f"{sys.executable} {grader} costly",
        ),
        *("--no-cache", "--concurrency", "4", "--budget-usd", "100"),
        cwd=project,
    )
    budget = _stored(project)["run"]["budget"]
    assert budget["calls"]["grader"]["known_cost"] > 0 and budget["calls"]["agent"]["known_cost"] > 0, r.stderr
    assert budget["calls_one_at_a_time"] == 2  # the first agent call and the first grader call, to learn their cost
    assert "⚠ budget" not in r.stdout
