"""Issue 30 points 8 and 9: the summary and the Markdown comment name which pass rate they show
(the weighted share of assertions, the tasks whose every assertion passed) and show the same
two numbers; the judges' spend is shown beside the agent's, not left out of the cost."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.support.cli import init_demo, km

JUDGE = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"output": json.dumps({"reasoning": "r", "score": 4, "reason": "ok"}), "costUSD": 0.0002}))
"""


@pytest.mark.slow
def test_summary_and_markdown_show_both_pass_rates_and_the_judge_spend(tmp_path: Path) -> None:
    project = init_demo(tmp_path / "demo")
    (project / "judge.py").write_text(JUDGE)
    r = km(
        "eval", "--judge", f"{sys.executable} judge.py:m", "--markdown", "pr.md", cwd=project, env={"COLUMNS": "120"}
    )
    assert r.returncode == 0, r.stdout
    report = json.loads(km("report", "latest", "--json", cwd=project).stdout)
    basic = report["statistics"]["variants"]["support-basic"]["pass_rate"]
    weighted = next(v["assertion_pass_rate"] for v in report["variants"] if v["name"] == "support-basic")
    tasks = f"{basic['passed']}/{basic['n']}"
    assert round(100 * basic["rate"], 1) != round(100 * weighted, 1)  # two different numbers, both named
    terminal = f"assertions passed {100 * weighted:.1f}% (weighted) · tasks passing every assertion {tasks}"
    assert terminal in r.stdout
    markdown = (project / "pr.md").read_text()
    assert "| tasks passing every assertion | assertions passed (weighted) |" in markdown
    assert f"| {100 * basic['rate']:.1f}% ({tasks}) | {100 * weighted:.1f}% |" in markdown
    # 46 judge calls at $0.0002: the agent (offline) cost nothing, the run did not; the same judge
    # is the hedging classifier (on by default with a judge), whose calls are shown as their own kind
    (spend,) = [line for line in r.stdout.splitlines() if line.startswith("spend (known): ")]
    assert spend.startswith("spend (known): agent $0.0000 · ") and " · judge $0.0092" in spend
    parts = re.findall(r"(\w+) \$(\d+\.\d{4})", spend.removeprefix("spend (known): "))
    assert parts[-1][0] == "total" and sum(float(v) for _, v in parts[:-1]) == pytest.approx(float(parts[-1][1]))
    assert spend in markdown
    assert "agent cost known" in markdown and "| cost known |" not in markdown
