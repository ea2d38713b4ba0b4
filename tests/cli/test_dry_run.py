"""Issue 34 point 1: ``eval --dry-run`` prints the plan, its estimated cost and wall time with a
range, and what the run could detect — from stored runs of the same agent, model and sample set,
else from the prompts' size at list price, else unknown — and runs, spends and stores nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from knowmeter.executors._prices import price_for
from tests.support.cli import km, km_process

#: a cost that depends on the sample (the prompt's length) and varies from call to call (±10%);
#: every call is counted in calls.txt; answers right on most samples, more often with the skill
AGENT = """\
import json, random, sys
req = json.load(sys.stdin)
with open(CALLS, "a") as fh:
    fh.write("call\\n")
n = len(req["prompt"])
cost = (0.01 + 0.004 * (n % 5)) * random.uniform(0.9, 1.1)
right = (n % 3 != 0) or bool(req.get("system"))
print(json.dumps({"output": "Refunds within 30 days." if right else "Not sure.", "costUSD": cost}))
"""


def project(tmp_path: Path) -> Path:
    """The project in ``tmp_path/p``; the agent counts its calls outside it (``calls.txt``), so the
    workspace, which the response cache keys on, stays as it was."""
    root = tmp_path / "p"
    root.mkdir()
    check = "assertions: [{type: icontains, value: 30 days}]"
    samples = "".join(f"- {{sample_id: s{i}, prompt: 'question {'x' * i}?', {check}}}\n" for i in range(16))
    (root / "eval-samples.yaml").write_text(samples)
    (root / "agent.py").write_text(f"CALLS = {str(tmp_path / 'calls.txt')!r}\n" + AGENT)
    (root / "skill.md").write_text("Refunds are possible within 30 days.\n")
    return root


ARGS = ("eval", "--control", "baseline", "--treatment", "skill.md", "--executor", f"{sys.executable} agent.py")


def runs(root: Path) -> list[Path]:
    folder = root / ".knowmeter" / "runs"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def calls(root: Path) -> int:
    path = root.parent / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.slow
def test_dry_run_on_a_rerun_estimates_within_the_range_it_states(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = km(*ARGS, "--dry-run", cwd=root)
    assert before.returncode == 0 and calls(root) == 0 and runs(root) == []  # nothing ran, nothing stored
    text = " ".join(before.stdout.split())
    assert text.startswith("DRY RUN — nothing was run, spent or stored")
    assert "plan: 16 samples × 2 variants × 1 repeat(s) = 32 tasks" in text
    assert "cost: unknown — no stored run of the same agent" in text
    assert "detectable: unknown — no stored run of this sample set" in text

    km_process(*ARGS, cwd=root)  # the first run, which fills the response cache
    made, spent = runs(root), calls(root)
    cached = json.loads(km_process(*ARGS, "--dry-run", "--json", cwd=root).stdout)
    assert cached["cached"] == 32 and cached["cost"]["estimate"] == 0.0  # a rerun would cost nothing
    plan = json.loads(km_process(*ARGS, "--dry-run", "--json", "--no-cache", cwd=root).stdout)
    assert runs(root) == made and calls(root) == spent  # a dry run starts no agent and writes no run
    cost, wall, detect = plan["cost"], plan["wall_s"], plan["detectable"]
    assert cost["low"] < cost["estimate"] < cost["high"] and made[0].name in cost["source"]
    assert wall["estimate"] is not None and wall["low"] <= wall["estimate"] <= wall["high"]
    assert detect["sd"] > 0 and detect["mde"] > 0 and detect["n_needed"] >= 2

    km_process(*ARGS, "--no-cache", cwd=root)  # the rerun: every task paid again
    (rerun,) = [r for r in runs(root) if r not in made]
    results = [json.loads(line) for line in (rerun / "results.jsonl").read_text().splitlines()]
    actual = sum(r["exec"]["cost_usd"] for r in results)
    assert len(results) == 32 and cost["low"] <= actual <= cost["high"], (actual, cost)


def test_without_history_the_price_table_or_unknown(tmp_path: Path) -> None:
    root = project(tmp_path)
    r = km(*ARGS[:5], "--executor", "openai", "--model", "gpt-4o-mini", "--dry-run", "--json",
           cwd=root, env={"OPENAI_API_KEY": "sk-test"})  # fmt: skip
    assert r.returncode == 0, r.stderr
    cost = json.loads(r.stdout)["cost"]
    price = price_for("gpt-4o-mini")
    assert price is not None
    prompts = [f"question {'x' * i}?" for i in range(16)]
    skill = len("Refunds are possible within 30 days.\n")
    chars = sum(len(p) for p in prompts) * 2 + skill * 16  # baseline has no artifact text
    low = (chars / 5 * price.input + 32 * 50 * price.output) / 1e6
    high = (chars / 3 * price.input + 32 * 1000 * price.output) / 1e6
    assert cost["low"] == pytest.approx(low) and cost["high"] == pytest.approx(high)
    assert "list price of gpt-4o-mini" in cost["source"]
    assert not (root / ".knowmeter" / "runs").exists()


def test_dry_run_refuses_resume(tmp_path: Path) -> None:
    r = km("eval", "--dry-run", "--resume", "latest", cwd=project(tmp_path))
    assert r.returncode == 2 and "--dry-run plans a new run" in r.stderr
