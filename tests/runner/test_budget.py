"""The budget is a real limit over every model call (agent and judge), costs must be finite and
≥ 0, and a run the budget stopped still gets a report that says it is partial."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowmeter.executors import ExecRequest, ExecResult, Executor, ExecutorError
from knowmeter.runner import (
    HEADROOM,
    Budget,
    BudgetExhausted,
    ExecutionSettings,
    MeteredExecutor,
    budget_warnings,
    execute_tasks,
)
from knowmeter.store import Grade, Processed, ResultsWriter, iter_results
from knowmeter.traces import Trace
from tests.support.cli import init_demo, km

from .test_runner import setup


class CostAgent(Executor):
    """Answers with the next scripted cost, after a scripted number of event-loop yields (so
    calls interleave differently from one example to the next)."""

    name = "costs"
    non_llm = False

    def __init__(self, costs: list[float], yields: list[int]) -> None:
        self.costs = iter(costs)
        self.yields = iter(yields)

    def identity(self) -> str:
        return "costs/1"

    async def run(self, request: ExecRequest) -> ExecResult:
        for _ in range(next(self.yields, 0)):
            await anyio.sleep(0)
        return ExecResult("ok", Trace(), cost_usd=next(self.costs, 0.0), num_turns=3, duration_api_ms=120.0)


def _run(tmp_path: Path, tasks, agent, budget: Budget, judge=None, concurrency: int = 4):
    async def post(task, result) -> Processed:
        if judge is None:
            return Processed()
        try:
            await judge.run(ExecRequest(task_id=task.id, sample_id="s", prompt="p", system=None))
        except ExecutorError as exc:
            return Processed(grade=Grade(judge_error=str(exc)))
        return Processed(grade=Grade())

    path = tmp_path / "results.jsonl"
    path.unlink(missing_ok=True)
    with ResultsWriter(path) as w:
        stats = anyio.run(
            lambda: execute_tasks(
                tasks,
                agent,
                writer=w,
                budget=budget,
                cache=None,
                post_process=post,
                settings=ExecutionSettings(concurrency=concurrency),
            )
        )
    return stats, list(iter_results(path))


unit = st.floats(min_value=0.001, max_value=1.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), concurrency=st.integers(1, 8), n=st.integers(1, 12), capped=st.booleans(), judged=st.booleans())
@pytest.mark.slow
def test_total_never_exceeded_under_concurrency(
    tmp_path: Path, data: st.DataObject, concurrency: int, n: int, capped: bool, judged: bool
) -> None:
    """Agent costs within the per-task cap (or, uncapped, within HEADROOM × the first one) and
    judge costs within HEADROOM × each other: whatever the interleaving, spent ≤ total."""
    a_unit, j_unit = data.draw(unit, "agent unit"), data.draw(unit, "judge unit")
    total = data.draw(st.floats(min_value=HEADROOM * (a_unit + j_unit), max_value=20.0), "total")
    factors = st.lists(st.floats(min_value=1.0, max_value=HEADROOM), min_size=2 * n, max_size=2 * n)
    agent_costs = [a_unit * f for f in data.draw(factors, "agent costs")]
    judge_costs = [j_unit * f for f in data.draw(factors, "judge costs")]
    yields = st.lists(st.integers(0, 5), min_size=2 * n, max_size=2 * n)
    budget = Budget(
        total, HEADROOM * a_unit if capped else None, expected=frozenset({"agent", "judge"} if judged else {"agent"})
    )
    judge = MeteredExecutor(CostAgent(judge_costs, data.draw(yields, "judge yields")), budget, "judge")
    stats, records = _run(
        tmp_path,
        setup(tmp_path, n=n),
        CostAgent(agent_costs, data.draw(yields, "agent yields")),
        budget,
        judge if judged else None,
        concurrency,
    )
    assert budget.spent_usd <= total + 1e-9
    assert budget.overshoot_usd == 0 and budget.in_flight == 0 and budget.reserved_usd == pytest.approx(0)
    assert len(records) + len(stats.not_started) == 2 * n
    booked = sum(c.spent_usd for c in budget.calls.values())
    assert booked == pytest.approx(budget.spent_usd)


def test_judge_calls_are_charged_and_stop_the_run(tmp_path: Path) -> None:
    budget = Budget(total_usd=0.05, expected=frozenset({"agent", "judge"}))
    judge = MeteredExecutor(CostAgent([0.01] * 100, []), budget, "judge")
    stats, records = _run(tmp_path, setup(tmp_path, n=10), CostAgent([0.0] * 100, []), budget, judge)
    assert budget.calls["judge"].spent_usd == pytest.approx(budget.spent_usd) and budget.spent_usd <= 0.05
    assert stats.not_started and budget.exhausted  # tasks stop once their grading can't be paid
    refused = [r for r in records if r["grade"].get("judge_error")]
    assert all("budget" in r["grade"]["judge_error"] for r in refused)


def test_a_refused_call_is_not_made(tmp_path: Path) -> None:
    budget = Budget(total_usd=0.0)
    budget.settle(budget.try_reserve("judge") or 0.0, 0.0, "judge")
    inner = CostAgent([1.0], [])
    with pytest.raises(BudgetExhausted):
        anyio.run(MeteredExecutor(inner, budget, "judge").run, ExecRequest("t", "s", "p", None))
    assert next(inner.costs) == 1.0  # the scripted cost is still unused: the executor was never called


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -0.5])
def test_invalid_costs_are_executor_errors(tmp_path: Path, bad: float) -> None:
    budget = Budget(total_usd=1.0)
    stats, records = _run(tmp_path, setup(tmp_path, n=3), CostAgent([bad] + [0.01] * 10, []), budget)
    assert len(records) == 6 and stats.errors == 1  # the run goes on
    err = [r for r in records if r["exec"]["error"]]
    assert "a cost must be a finite number >= 0" in err[0]["exec"]["error"] and err[0]["exec"]["cost_usd"] is None
    assert (err[0]["exec"]["num_turns"], err[0]["exec"]["duration_api_ms"]) == (3, 120.0)  # the rest is kept
    assert budget.spent_usd == pytest.approx(0.05) and budget.to_dict()["tasks_with_unknown_cost"] == 1
    judge = MeteredExecutor(CostAgent([bad], []), budget, "judge")
    with pytest.raises(ExecutorError, match="finite number"):
        anyio.run(judge.run, ExecRequest("t", "s", "p", None))
    assert budget.in_flight == 0 and math.isfinite(budget.spent_usd)


JUDGE = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"output": json.dumps({"reasoning": "r", "score": 4, "reason": "ok"}), "costUSD": 0.004}))
"""


@pytest.mark.slow
def test_budget_stop_with_a_judge_leaves_a_partial_report(tmp_path: Path) -> None:
    """The offline agent costs nothing; only the judge does (grading, and the hedging classifier
    it also is by default). The budget binds on it, the run stops early, and report.json + the
    index row say the run is partial."""
    init_demo(tmp_path / "d")
    demo = tmp_path / "d"
    (demo / "judge.py").write_text(JUDGE)
    r = km(
        "eval",
        "--json",
        "--budget-usd",
        "0.03",
        "--concurrency",
        "2",
        "--judge",
        f"{sys.executable} judge.py:m",
        cwd=demo,
    )
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    run = report["run"]
    assert run["budget"]["spent_known_usd"] <= 0.03
    calls = run["budget"]["calls"]
    spent = calls["judge"]["spent_known_usd"] + calls.get("hedging", {}).get("spent_known_usd", 0)
    assert spent == pytest.approx(run["budget"]["spent_known_usd"]) and calls["judge"]["spent_known_usd"] > 0
    assert run["status"] == "incomplete" and run["tasks_missing"] > 0
    assert run["partial"]["reason"].startswith("stopped by the budget")
    decision = report["decision"]
    assert decision["outcome"] == "INCOMPLETE" and "stopped by the budget" in decision["headline"]
    assert decision["recommendation"].startswith("NOT DECIDED — the run is incomplete")
    assert (demo / ".knowmeter" / "runs" / run["id"] / "report.json").is_file()
    listed = km("runs", cwd=demo)
    assert run["id"] in listed.stdout and "incomplete" in listed.stdout


AGENT = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"output": "an answer", "costUSD": 0.01}))
"""


def test_a_variant_without_results_still_gets_a_report(tmp_path: Path) -> None:
    """The budget pays for one task: the other variant has no results, yet report.json is
    written (and `knowmeter report` re-builds it) saying which variant has none."""
    init_demo(tmp_path / "d")
    demo = tmp_path / "d"
    (demo / "agent.py").write_text(AGENT)
    r = km("eval", "--json", "--budget-usd", "0.012", "--executor", f"{sys.executable} {demo / 'agent.py'}", cwd=demo)
    assert r.returncode == 1, r.stderr
    run = json.loads(r.stdout)["run"]
    assert run["tasks_done"] == 1 and len(run["partial"]["variants_without_results"]) == 1
    again = km("report", run["id"], "--json", cwd=demo)
    assert again.returncode == r.returncode == 1, again.stderr  # eval and report decide alike
    assert json.loads(again.stdout)["run"]["partial"] == run["partial"]


def test_budget_warnings_name_what_the_budget_could_not_do() -> None:
    budget = Budget(total_usd=0.05)
    for kind, cost in [("agent", 0.01), ("agent", None), ("judge", 0.08)]:
        reserved = budget.try_reserve(kind)
        assert reserved is not None
        budget.settle(reserved, cost, kind)
    assert budget_warnings(budget.to_dict(), concurrency=4) == [
        "budget $0.05 exceeded: $0.0900 spent (a call's cost is known only after it ran, and one cost more than "
        "was reserved for it)",
        "budget $0.05 counts only known costs: 1 of 3 model call(s) reported no cost (their spend is unknown)",
    ]  # the first call of each kind ran alone to learn its cost: no warning for that
    assert budget_warnings(Budget().to_dict()) == []  # no total, nothing it could fail to do


def test_a_free_kind_is_never_refused_and_a_continued_budget_counts_the_earlier_leg() -> None:
    free = Budget(total_usd=0.0, free=frozenset({"agent"}))
    assert not free.one_at_a_time_now
    assert free.try_reserve("agent") == 0.0 and free.one_at_a_time == 0  # known to cost 0: nothing to learn
    assert free.try_reserve("judge") is None  # any other kind is refused by a budget of 0
    earlier = Budget(total_usd=1.0)
    earlier.settle(earlier.try_reserve() or 0.0, 0.3)
    later = Budget(total_usd=1.0)
    assert later.one_at_a_time_now and not Budget().one_at_a_time_now  # no total: nothing to learn
    later.continue_from(earlier.record())
    assert not later.one_at_a_time_now  # the earlier leg learnt the agent's cost
    assert later.spent_usd == pytest.approx(0.3) and later.calls["agent"].known == 1
    assert later.try_reserve() == pytest.approx(0.3 * HEADROOM)  # its cost is known: no call alone to learn it
    later.settle(0.3 * HEADROOM, 0.8)
    assert later.to_dict()["spent_known_usd"] == pytest.approx(1.1) and later.overshoot_usd == pytest.approx(0.1)
