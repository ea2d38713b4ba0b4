"""Issue 34 point 5: each treatment's paired cost, latency and tokens against the control —
unknown stays unknown (never 0) — and the trade-off line in every output (terminal, report.json,
report.html, Markdown) of a real run with a script agent that reports its cost."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from knowmeter.compare import ResourceUse, compare_resources
from knowmeter.report._markdown import md
from knowmeter.report._tradeoff import resource_phrase
from tests.support.cli import km_process


def use(sample: str, variant: str, cost: float | None, *, ok: bool = True, repeat: int = 0) -> ResourceUse:
    return ResourceUse(sample, repeat, variant, ok, cost, 1000.0, None)


def test_pairs_are_by_sample_and_repeat_and_unknown_cost_is_left_out() -> None:
    uses = [
        use("a", "c", 0.01), use("a", "t", 0.02),
        use("b", "c", 0.02), use("b", "t", 0.03),
        use("c", "c", None), use("c", "t", 0.05),  # the control's cost unknown: the pair is left out
        use("d", "c", 0.01), use("d", "t", 9.0, ok=False),  # an errored task pairs with nothing
        use("e", "c", 0.01, repeat=1),  # no treatment task at this repeat
    ]  # fmt: skip
    (comp,) = compare_resources(uses, control="c", treatments=["t"], b=200, seed=1)
    cost, latency, tokens = comp.resources
    assert (cost.n_pairs, cost.n_unknown) == (2, 1)
    assert cost.control_mean == pytest.approx(0.015) and cost.treatment_mean == pytest.approx(0.025)
    assert cost.relative.estimate == pytest.approx(0.05 / 0.03 - 1) and cost.difference.estimate == pytest.approx(0.01)
    assert latency.n_pairs == 3 and latency.relative.estimate == 0.0
    assert tokens.n_pairs == 0 and tokens.n_unknown == 3 and tokens.relative.estimate is None
    assert tokens.control_mean is None and tokens.difference.estimate is None
    assert resource_phrase(tokens) == "tokens unknown (not reported for the 3 paired task(s))"
    assert resource_phrase(cost).startswith("cost per task +67% [") and "unknown for 1 more" in resource_phrase(cost)


def test_no_pair_and_one_pair() -> None:
    (none,) = compare_resources([use("a", "c", 0.01)], control="c", treatments=["t"])
    assert all(d.n_pairs == 0 for d in none.resources)
    assert resource_phrase(none.resources[0]) == "cost per task unknown (no paired task finished)"
    (one,) = compare_resources([use("a", "c", 0.01), use("a", "t", 0.03)], control="c", treatments=["t"])
    assert one.resources[0].relative.estimate == pytest.approx(2.0)
    assert one.resources[0].relative.percentile.low is None  # one pair: no interval
    assert "+200% [CI unknown: one sample]" in resource_phrase(one.resources[0])


#: reports a cost, tokens and no latency of its own; with the skill (a system prompt) it costs
#: about twice as much and uses more tokens
PRICED = """\
import json, sys
req = json.load(sys.stdin)
n = len(req["prompt"])
cost = (0.02 if req.get("system") else 0.01) * (1 + n % 3 / 10)
print(json.dumps({"output": "Refunds within 30 days.", "costUSD": cost,
                  "inputTokens": 100 + n + (400 if req.get("system") else 0), "outputTokens": 20}))
"""


@pytest.mark.slow
def test_a_dearer_treatment_shows_its_cost_in_every_output(tmp_path: Path) -> None:
    check = "assertions: [{type: icontains, value: 30 days}]"
    samples = "".join(f"- {{sample_id: s{i}, prompt: 'question {'x' * i}?', {check}}}\n" for i in range(12))
    (tmp_path / "eval-samples.yaml").write_text(samples)
    (tmp_path / "agent.py").write_text(PRICED)
    (tmp_path / "skill.md").write_text("Refunds are possible within 30 days.\n")
    r = km_process(
        "eval", "--control", "baseline", "--treatment", "skill.md", "--executor", f"{sys.executable} agent.py",
        "--markdown", "summary.md", cwd=tmp_path,
    )  # fmt: skip
    run = next((tmp_path / ".knowmeter" / "runs").iterdir())
    report = json.loads((run / "report.json").read_text())
    (comp,) = report["resources"]
    cost = {d["resource"]: d for d in comp["resources"]}["cost_usd"]
    assert cost["n_pairs"] == 12 and cost["relative"]["estimate"] == pytest.approx(1.0)
    low, high = cost["relative"]["percentile"]["low"], cost["relative"]["percentile"]["high"]
    assert low == pytest.approx(1.0) and high == pytest.approx(1.0)  # every pair costs exactly twice as much
    assert cost["relative"]["percentile"]["seed"] == report["run"]["seed"]
    line = "cost per task +100% [+100%, +100%] ($0.0110 → $0.0220, 12 pairs)"
    flat = " ".join(r.stdout.split())
    assert "Trade-off (paired by sample and repeat" in flat and line in flat, r.stdout
    assert "skill vs baseline:" in flat and " points" in flat and "tokens +" in flat
    assert md(line) in (tmp_path / "summary.md").read_text()
    assert line in (run / "report.html").read_text()


def test_the_pairs_do_not_depend_on_the_order_of_the_tasks_and_a_later_task_replaces_an_earlier() -> None:
    """The columns pair by (sample, repeat) in sorted order whatever order the tasks came in
    (issue 32: pairing without a record per task); a second task with the same key replaces the
    first, as a re-run's record does."""
    uses = [
        use(f"s{i}", v, 0.01 * (i % 7) + (0.02 if v == "t" else 0.0), repeat=r)
        for i in range(40)
        for r in (0, 1)
        for v in ("c", "t")
    ]
    uses.append(use("zz", "t", 1.0))  # a treatment task with no control task
    shuffled = uses[::-1][::3] + uses[::-1][1::3] + uses[::-1][2::3]
    first, again = (compare_resources(u, control="c", treatments=["t"], b=300, seed=2) for u in (uses, shuffled))
    assert first == again and first[0].resources[0].n_pairs == 80
    replaced = compare_resources([*uses, use("s0", "t", 5.0)], control="c", treatments=["t"], b=300, seed=2)
    before, cost = first[0].resources[0].treatment_mean, replaced[0].resources[0]
    assert before is not None and cost.n_pairs == 80 and cost.treatment_mean == pytest.approx(before + 4.98 / 80)
