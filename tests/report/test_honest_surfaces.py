"""The "never misled" audit (issue audit-honest) on a real run whose agent fails some tasks and
reports its cost for some: a task that failed to run is never read as graded or gap-free, the
first screen says how many failed, and a merged run's spend is the straight run's."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from knowmeter.report import joined_report
from tests.report.conftest import Browser
from tests.report.report_support import latest_run
from tests.report.test_viewer import request, served
from tests.support.cli import km_process
from tests.support.projects import write_skills

#: answers "ok" (the treatment always, the control on two samples of three); the treatment fails
#: on samples 3 and 8; the cost and tokens are reported on even samples only
AGENT = r"""
import json, sys
req = json.load(sys.stdin)
i, treat = int(req["prompt"].split()[-1]), "ALWAYS" in (req.get("system") or "")
if treat and i % 5 == 3:
    sys.stderr.write("boom\n")
    sys.exit(1)
out = {"output": "ok fine" if treat or i % 3 else "no idea"}
if i % 2 == 0:
    out.update(costUSD=0.01, inputTokens=100, outputTokens=20)
print(json.dumps(out))
"""

SAMPLES = 10
FAILED = {"s03", "s08"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("honest")
    (root / "agent.py").write_text(AGENT)
    write_skills(root, {"a": "SOMETIMES\n", "b": "ALWAYS\n"})
    with (root / "eval-samples.jsonl").open("w") as fh:
        for i in range(SAMPLES):
            assertion = {"type": "contains", "value": "ok"}
            sample = {"sample_id": f"s{i:02d}", "prompt": f"question {i}", "assertions": [assertion]}
            fh.write(json.dumps(sample) + "\n")
    (root / "eval.yaml").write_text(
        "samples: eval-samples.jsonl\n"
        f'executor: "{sys.executable} agent.py"\n'
        "noCache: true\n"
        "variants:\n"
        "  - {name: a, role: control, artifact: skills/a.md}\n"
        "  - {name: b, role: treatment, artifact: skills/b.md}\n"
    )
    return root


@pytest.fixture(scope="module")
def straight(project: Path) -> Path:
    r = km_process("eval", "-q", cwd=project)
    assert r.returncode == 1, r.stderr  # too few pairs for a verdict
    return latest_run(project)


@pytest.mark.slow
def test_first_screen_says_how_many_tasks_failed(straight: Path) -> None:
    page = (straight / "report.html").read_text()
    # 8 of the treatment's 10 tasks ran (all correct), 10 of the control's (6 correct)
    said = "The treatment b answered 8 of 8 samples correctly (2 more failed to run) vs 6 of 10 for the control a"
    assert said in page


@pytest.mark.slow
def test_csv_leaves_a_failed_tasks_grading_and_gaps_unknown(straight: Path, project: Path) -> None:
    r = km_process("report", straight.name, "--csv", "out.csv", cwd=project)
    assert r.returncode == 1, r.stderr
    rows = list(csv.DictReader(io.StringIO((project / "out.csv").read_text())))
    assert len(rows) == 2 * SAMPLES
    for row in rows:
        failed = row["variant"] == "b" and row["sample_id"] in FAILED
        assert bool(row["error"]) == failed
        counts = (row["assertions_passed"], row["assertions_failed"], row["gap_signals"])
        if failed:
            assert counts == ("", "", ""), row  # never graded nor analysed: unknown, not 0
        else:
            assert counts in (("1", "0", "0"), ("0", "1", "0")), row


@pytest.mark.slow
def test_merged_shards_spend_what_the_straight_run_spent(straight: Path, project: Path) -> None:
    shards = []
    for shard in ("1/2", "2/2"):
        assert km_process("eval", "-q", "--shard", shard, cwd=project).returncode == 1
        shards.append(latest_run(project).name)
    r = km_process("merge", *shards, cwd=project)
    assert r.returncode == 1, r.stderr
    merged = latest_run(project)
    spend = [line for line in r.stdout.splitlines() if line.startswith("spend (known)")]
    alone = km_process("report", straight.name, cwd=project).stdout
    assert spend == [line for line in alone.splitlines() if line.startswith("spend (known)")]
    assert spend == ["spend (known): agent $0.0900 + 11 call(s) unknown · total $0.0900"]
    budgets = [joined_report(run)["run"]["budget"] for run in (straight, merged)]
    keys = ("spent_known_usd", "tasks_with_known_cost", "tasks_with_unknown_cost", "calls", "total_usd")
    straight_budget, merged_budget = ({k: b[k] for k in keys} for b in budgets)
    assert merged_budget == straight_budget
    assert "summed over 2 shards" in budgets[1]["note"]
    md = km_process("report", merged.name, "--markdown", "merged.md", cwd=project)
    assert md.returncode == 1, md.stderr
    assert spend[0] in (project / "merged.md").read_text()
    # its own times are the merge's: the page names the shards it was made from, with theirs
    page = (merged / "report.html").read_text()
    for index, shard in enumerate(shards, 1):
        assert f"merged from shard {index}/2</th><td>run {shard} · complete · created" in page


@pytest.mark.slow
def test_show_names_absent_layers_absent(straight: Path, project: Path) -> None:
    r = km_process("show", straight.name, "s01", cwd=project)
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())  # the lines wrap at the terminal's width
    assert "a · control · repeat 0 · composite 5.00 (fact 5.00 · behavior absent · judge absent)" in said


@pytest.mark.browser
def test_sample_table_gap_cell_of_a_failed_task_is_unknown(browser: Browser, straight: Path) -> None:
    page = browser.open(straight / "report.html")
    for sample in ("s03", "s01"):
        cells = page.locator(f'#sample-body tr.row[data-sample="{sample}"] td')
        gap = cells.nth(cells.count() - 1).inner_text()
        assert gap == ("unknown" if sample in FAILED else "none"), sample
    assert browser.errors == []


@pytest.mark.slow
def test_markdown_names_each_p_values_test(straight: Path, project: Path) -> None:
    r = km_process("report", straight.name, "--markdown", "pr.md", cwd=project)
    assert r.returncode == 1, r.stderr
    text = (project / "pr.md").read_text()
    stored = joined_report(straight)["comparisons"][0]["metrics"]["composite"]["permutation"]
    assert stored["method"] == "exact"  # 8 pairs: 256 sign flips, all enumerated
    row = next(line for line in text.splitlines() if line.startswith("| composite |"))
    assert "(exact, every sign flip)" in row
    assert "- p, family composite: paired permutation (sign-flip) test of composite at α 0.05 — single test" in text


@pytest.mark.slow
def test_summary_runs_trends_and_view_say_the_cost_in_dollars_and_unknown_tasks(straight: Path, project: Path) -> None:
    # the control: 5 tasks reported $0.01 each, 5 reported nothing; the run: 9 and 11
    said = {
        "summary": (km_process("report", straight.name, cwd=project).stdout, "$0.0500 (+5 tasks unknown)"),
        "trends": (km_process("trends", cwd=project).stdout, "$0.0500 (+5 tasks unknown)"),
        "runs": (km_process("runs", cwd=project).stdout, "$0.0900 (+11 tasks unknown)"),
    }
    with served(project / ".knowmeter") as server:
        said["view"] = (request(server, "GET", "/")[1], "$0.0900 (+11 tasks unknown)")
    for surface, (text, cost) in said.items():
        assert cost in " ".join(text.split()), surface


@pytest.mark.slow
def test_markdown_gap_rate_carries_its_confidence(straight: Path, project: Path) -> None:
    # the script agent gives no trace: a 0% gap rate here is of low confidence, as the summary says
    r = km_process("report", straight.name, "--markdown", "gaps.md", cwd=project)
    assert r.returncode == 1, r.stderr
    rows = [line for line in (project / "gaps.md").read_text().splitlines() if line.startswith("| a | 0.0%")]
    assert rows == ["| a | 0.0% (0/10) | low | regex-only | 100.0% (1/1) | none |"]
    assert "confidence low · hedging regex-only" in " ".join(r.stdout.split())
