"""Issue 5 end to end on the demo: gap rates per variant, trends, CI gates, the nudge, drafts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from knowmeter.gates import NUDGE_TEXT, check_gates, evolution_nudges
from tests.support.cli import init_demo, km


def test_thinner_variant_has_more_failed_searches_and_higher_gap_rate(demo_report: dict) -> None:  # type: ignore[type-arg]
    gaps = {g["variant"]: g for g in demo_report["gaps"]["variants"]}
    basic, expert = gaps["support-basic"], gaps["support-expert"]
    assert basic["signals_by_source"]["failed_search"] > expert["signals_by_source"]["failed_search"]
    assert basic["gap_rate"] > expert["gap_rate"]
    for g in gaps.values():
        assert g["watermark"]["short"] == demo_report["run"]["watermark"]["short"]
        assert "absolute completeness" in g["watermark"]["warning"]
    cov = {c["variant"]: c for c in demo_report["coverage"]["variants"]}
    assert all(c["watermark"]["count"] == 23 for c in cov.values())
    assert all(0 <= c["rate"] <= 1 for c in cov.values())


def _config(demo: Path, name: str, artifact: str, file: str) -> Path:
    path = demo / file
    path.write_text(
        yaml.safe_dump(
            {
                "samples": "eval-samples.yaml",
                "executor": "offline",
                "knowledgeDirs": ["workspace/knowledge"],
                "variants": [{"name": name, "artifact": artifact, "cwd": "workspace"}],
            }
        )
    )
    return path


@pytest.fixture
def fresh_demo(tmp_path: Path) -> Path:
    init_demo(tmp_path / "d")
    return tmp_path / "d"


@pytest.mark.slow
def test_max_gap_rate_gates_the_treatment_and_the_first_and_last_lines_agree(fresh_demo: Path) -> None:
    # the control (support-basic, 87% gap rate) is shown but not gated; the treatment (4.3%) is
    passing = km("eval", "--max-gap-rate", "0.5", "--json", cwd=fresh_demo)
    report = json.loads(passing.stdout)
    assert passing.returncode == 0 and [g["variant"] for g in report["gates"]["results"]] == ["support-expert"]
    assert report["decision"]["outcome"] == "PROGRESS" and report["exit_code"] == 0
    r = km("eval", "--max-gap-rate", "0.02", cwd=fresh_demo)
    assert r.returncode == 1
    text = " ".join(r.stdout.split())
    lines = [line for line in r.stdout.splitlines() if line.strip()]
    assert lines[0].startswith("GATE FAILED · gap rate of support-expert is 4.3% > max 2.0%"), lines[0]
    assert "(verdict on what was measured: PROGRESS)" in text
    assert r.stdout.split("\n\n")[-1].startswith("DO NOT SHIP — a gate")  # the recommendation, last
    assert "DO NOT SHIP — a gate failed: gap rate of support-expert is 4.3% > max 2.0%" in text
    assert "SHIP — the treatment is significantly better" not in text
    runs = km("runs", "--json", cwd=fresh_demo)
    assert sorted(r["outcome"] for r in json.loads(runs.stdout)) == ["GATE FAILED", "PROGRESS"]


@pytest.mark.slow
def test_regression_gate_trends_and_nudge(fresh_demo: Path) -> None:
    good = _config(fresh_demo, "kb", "support-expert", "good.yaml")
    bad = _config(fresh_demo, "kb", "support-basic", "bad.yaml")
    for i in range(3):
        r = km("eval", "--config", str(good), "--json", "--gap-rate-regression", "0.05", cwd=fresh_demo)
        report = json.loads(r.stdout)
        assert report["verdict"]["level"] == "SOLO"
        assert report["gates"]["passed"]
        nudged = any(NUDGE_TEXT in n for n in report["notes"])
        assert nudged == (i == 2), report["notes"]
    # the same third run, cut short as Ctrl-C leaves it: `report` says incomplete and does not nudge
    run_dir = fresh_demo / ".knowmeter" / "runs" / report["run"]["id"]
    record = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**record, "status": "interrupted"}))
    lines = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "results.jsonl").write_text("".join(lines[:4]))
    partial = km("report", report["run"]["id"], "--json", cwd=fresh_demo)
    assert partial.returncode == 1
    partial_report = json.loads(partial.stdout)
    assert partial_report["notes"] == [] and partial_report["decision"]["outcome"] == "INCOMPLETE"
    (run_dir / "run.json").write_text(json.dumps(record))
    (run_dir / "results.jsonl").write_text("".join(lines))
    restored = km("report", report["run"]["id"], "--json", cwd=fresh_demo)
    assert restored.returncode == 0 and any(NUDGE_TEXT in n for n in json.loads(restored.stdout)["notes"])
    r = km("eval", "--config", str(bad), "--gap-rate-regression", "0.05", cwd=fresh_demo)
    assert r.returncode == 1
    reason = " ".join(r.stdout.split())
    assert re.match(
        r"GATE FAILED · gap rate of kb went \d+\.\d% → 87\.0% \(\+\d+\.\d points; allowed \+5\.0\) "
        r"since run \S+ on eval-samples\.yaml@",
        reason,
    ), reason
    trends = km("trends", "--variant", "kb", cwd=fresh_demo)
    assert trends.returncode == 0
    assert len([line for line in trends.stdout.splitlines() if line.startswith("  composite ")]) == 4, trends.stdout
    assert "absolute completeness" in " ".join(trends.stdout.split())


def test_gaps_and_sample_commands(fresh_demo: Path) -> None:
    assert km("eval", "--report-only", cwd=fresh_demo).returncode == 0
    g = km("gaps", "latest", "--variant", "support-basic", "--limit", "2", cwd=fresh_demo)
    assert g.returncode == 0 and "[failed search]" in g.stdout and "sample set eval-samples.yaml" in g.stdout
    s = km("sample", "--from-gaps", "latest", "--variant", "support-basic", "--max", "3", cwd=fresh_demo)
    assert s.returncode == 0, s.stderr
    drafts = yaml.safe_load((fresh_demo / "eval-samples.drafts.yaml").read_text())
    assert len(drafts) == 3 and all(d["provenance"] == "gap-derived" and d["draft"] for d in drafts)
    again = km("sample", "--from-gaps", "latest", cwd=fresh_demo)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_gaps_and_sample_of_a_comprehension_run_say_it_has_no_gap_analysis(fresh_demo: Path) -> None:
    """The demo's comprehension example is the latest run once its printed command ran: gaps and
    drafts name the run's kind, not a variant None."""
    import shlex

    from knowmeter.cli._init import COMPREHENSION_DEMO

    assert km("comprehend", *shlex.split(COMPREHENSION_DEMO), cwd=fresh_demo).returncode == 1
    for args in (("gaps", "latest"), ("sample", "--from-gaps", "latest")):
        r = km(*args, cwd=fresh_demo)
        assert r.returncode == 2, r.stderr
        assert "comprehension run: it has no gap analysis" in r.stderr and "None" not in r.stderr, r.stderr


def test_gate_logic_unknown_rate_fails_and_first_run_has_nothing_to_regress() -> None:
    res = check_gates({"a": None, "b": 0.2}, {}, sample_set="s@1", max_gap_rate=0.3, regression=0.1)
    by = {(r.gate, r.variant): r for r in res}
    assert not by[("max_gap_rate", "a")].passed and by[("max_gap_rate", "b")].passed
    assert by[("gap_rate_regression", "b")].passed and "no earlier run" in by[("gap_rate_regression", "b")].message
    res = check_gates({"b": 0.35}, {"b": ("r1", 0.2)}, sample_set="s@1", max_gap_rate=None, regression=0.1)
    assert not res[0].passed and "since run r1" in res[0].message


def test_nudge_needs_three_low_runs_in_a_row() -> None:
    assert evolution_nudges({"a": [0.05]}, {"a": 0.0}) == []
    assert evolution_nudges({"a": [0.5, 0.05, 0.1]}, {"a": 0.02}) != []
    assert evolution_nudges({"a": [0.05, 0.2]}, {"a": 0.02}) == []
    assert evolution_nudges({"a": [0.05, None]}, {"a": 0.02}) == []
