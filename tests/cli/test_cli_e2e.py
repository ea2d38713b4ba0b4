"""End to end through the CLI: init → eval → report → runs, kill and resume, bad input."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.report import joined_report
from knowmeter.store import iter_results
from tests.support.cli import init_demo, km, km_process, km_started


def test_demo_report_has_two_variants_real_tool_calls_and_a_difference(demo_report: dict) -> None:  # type: ignore[type-arg]
    variants = {v["name"]: v for v in demo_report["variants"]}
    assert set(variants) == {"support-basic", "support-expert"}
    assert all(v["tasks"] >= 20 and v["errors"] == 0 for v in variants.values())
    assert demo_report["run"]["executor"]["label"].startswith("non-LLM")
    tools = {e["tool"] for t in demo_report["tasks"] for e in t["exec"]["trace"]["events"] if e["kind"] == "tool_call"}
    assert {"Read", "Grep"} <= tools
    outputs = {(t["sample_id"], t["variant"]): t["exec"]["output"] for t in demo_report["tasks"]}
    differing = sum(outputs[(s, "support-basic")] != outputs[(s, "support-expert")] for s, _ in outputs)
    assert differing >= 10
    wm = demo_report["run"]["watermark"]
    assert wm["paths"] == ["eval-samples.yaml"] and wm["count"] >= 20 and len(wm["short"]) == 8


def test_report_rerenders_without_rerunning_and_runs_lists_it(demo: Path, demo_report: dict) -> None:  # type: ignore[type-arg]
    run_id = demo_report["run"]["id"]
    results = demo / ".knowmeter" / "runs" / run_id / "results.jsonl"
    before = results.read_bytes()
    r = km("report", run_id[:15], "--json", "--report-only", cwd=demo)
    assert r.returncode == 0, r.stderr
    again = json.loads(r.stdout)
    assert again["run"]["id"] == run_id and results.read_bytes() == before
    assert [v["layer_means"] for v in again["variants"]] == [v["layer_means"] for v in demo_report["variants"]]
    listing = km("runs", cwd=demo)
    assert run_id in listing.stdout


@pytest.mark.slow
def test_kill_midway_then_resume_runs_every_task_exactly_once(tmp_path: Path) -> None:
    init_demo(tmp_path / "d")
    demo = tmp_path / "d"
    agent = demo / "slow_agent.py"
    agent.write_text(
        "import json, sys, time\nreq = json.load(sys.stdin)\ntime.sleep(0.15)\n"
        "print(json.dumps({'output': 'ok ' + req['prompt'][:20], 'costUSD': 0.0}))\n"
    )
    proc = km_started(
        "eval",
        "--executor",
        f"{sys.executable} {agent}",
        "--concurrency",
        "2",
        "--report-only",
        cwd=demo,
        output=subprocess.DEVNULL,
    )
    runs = demo / ".knowmeter" / "runs"
    deadline = time.time() + 60
    results = None
    while time.time() < deadline:
        found = list(runs.glob("*/results.jsonl")) if runs.exists() else []
        if found and sum(1 for _ in iter_results(found[0])) >= 8:
            results = found[0]
            break
        time.sleep(0.05)
    assert results is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = sum(1 for _ in iter_results(results))
    assert done_before < 46
    r = km("eval", "--resume", results.parent.name, "--report-only", cwd=demo)
    assert r.returncode == 0, r.stderr
    assert f"{46 - done_before} of 46 tasks left" in r.stderr or "tasks left" in r.stderr
    ids = [rec["task_id"] for rec in iter_results(results)]
    assert len(ids) == 46 and len(set(ids)) == 46
    report = joined_report(results.parent)
    assert report["run"]["tasks_missing"] == 0 and report["run"]["status"] == "complete"


@pytest.mark.parametrize(
    ("args", "files", "expected"),
    [
        (["eval", "--samples", "missing.yaml", "--control", "baseline"], {}, "missing.yaml: sample file not found"),
        (
            ["eval", "--control", "nosuch"],
            {"eval-samples.yaml": "- {sample_id: a, prompt: x}\n"},
            "unknown variant 'nosuch'",
        ),
        (
            ["eval", "--control", "baseline", "--executor", "./no-such-agent"],
            {"eval-samples.yaml": "- {sample_id: a, prompt: x}\n"},
            "not found or not executable",
        ),
        (
            ["eval"],
            {
                "eval.yaml": "samples: s.yaml\nvariants: [{artifact: baseline}]\nconcurency: 2\n",
                "s.yaml": "- {sample_id: a, prompt: x}\n",
            },
            "unknown config key 'concurency'",
        ),
        (
            ["eval", "--control", "baseline"],
            {"eval-samples.yaml": "- {sample_id: a, prompt: x}\n- {sample_id: a, prompt: y}\n"},
            "duplicate sample_id 'a'",
        ),
        (
            ["eval", "--control", "baseline"],
            {"eval-samples.yaml": "- sample_id: a\n  prompt: x\n  assertions: [{type: no_such_type, value: 1}]\n"},
            "no_such_type",
        ),
        (["report", "nope"], {".knowmeter/runs/.keep": ""}, "run 'nope' not found"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str], files: dict[str, str], expected: str) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, args)
    finally:
        os.chdir(old)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and expected in lines[0] and "Traceback" not in result.output


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    init_demo(tmp_path / "x")
    r = km_process("init", "x", cwd=tmp_path)  # a true command-line test: a real process's exit code
    assert r.returncode == 2 and "already exists" in r.stderr


def test_a_second_run_from_the_cache_costs_nothing_and_is_listed_first(tmp_path: Path) -> None:
    init_demo(tmp_path / "d")
    assert km("eval", "--quiet", cwd=tmp_path / "d").returncode == 0
    r = km("eval", "--json", "--report-only", cwd=tmp_path / "d")  # often within the same second
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [v["cached"] for v in report["variants"]] == [23, 23]
    assert [v["cost"] for v in report["variants"]] == [
        {"known_usd": 0.0, "tasks_with_known_cost": 23, "tasks_with_unknown_cost": 0}
    ] * 2
    runs = json.loads(km("runs", "--json", cwd=tmp_path / "d").stdout)
    assert [run["cost_known_usd"] for run in runs] == [0.0, 0.0]
    assert runs[0]["id"] == report["run"]["id"]  # newest first
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", runs[0]["created_at"])


@pytest.mark.slow
def test_repeats_give_stability_and_saturation(tmp_path: Path) -> None:
    init_demo(tmp_path / "d")
    r = km("eval", "--repeat", "2", "--json", "--report-only", "--no-cache", cwd=tmp_path / "d")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert len(report["tasks"]) == 92
    assert {t["repeat"] for t in report["tasks"]} == {0, 1} and not any(t["cached"] for t in report["tasks"])
    s = report["statistics"]["variants"]["support-expert"]
    assert s["repeats"] == 2
    assert s["stability"]["repeat_share"] == 0.0 and s["stability"]["stable"]  # the offline agent is deterministic
    assert [p["repeats"] for p in s["saturation"]["points"]] == [1, 2]


def test_report_overrides_recompute_the_verdict(demo: Path, demo_report: dict) -> None:  # type: ignore[type-arg]
    run_id = demo_report["run"]["id"]
    assert demo_report["verdict"]["level"] == "PROGRESS" and demo_report["exit_code"] == 0
    strict = km("report", run_id, "--threshold", "5", "--json", cwd=demo)
    assert strict.returncode == 1
    report = json.loads(strict.stdout)
    assert report["verdict"]["level"] != "PROGRESS" and report["statistics"]["config"]["threshold"] == 5
    reseeded = json.loads(
        km("report", run_id, "--seed", "7", "--bootstrap-samples", "2000", "--json", "--report-only", cwd=demo).stdout
    )
    ci = reseeded["comparisons"][0]["metrics"]["composite"]["diff"]["bca"]
    assert (ci["seed"], ci["b"]) == (7, 2000)
    text = km("report", run_id, cwd=demo).stdout
    assert text.splitlines()[0].startswith("PROGRESS") and "methodology audit" in text
    needy = json.loads(
        km(
            "report",
            run_id,
            "--min-pairs",
            "100",
            "--max-mde",
            "0.1",
            "--stability-limit",
            "0.3",
            "--json",
            "--report-only",
            cwd=demo,
        ).stdout
    )
    assert {k: needy["statistics"]["config"][k] for k in ("min_pairs", "max_mde", "stability_limit")} == {
        "min_pairs": 100,
        "max_mde": 0.1,
        "stability_limit": 0.3,
    }
    assert (needy["verdict"]["level"], needy["verdict"]["pairs"][0]["rule"]) == ("CAUTIOUS", "few_pairs")
    # the run is the session's shared demo run: leave its stored report as the run's own settings decide it
    assert km("report", run_id, "--report-only", cwd=demo).returncode == 0


@pytest.mark.slow
def test_hedging_classifier_from_the_command_line(tmp_path: Path) -> None:
    init_demo(tmp_path / "d")
    demo = tmp_path / "d"
    (demo / "hedge.py").write_text(
        "import json, sys\njson.load(sys.stdin)\n"
        "print(json.dumps({'output': json.dumps({'isUncertainty': False, "
        "'confidence': 0.9, 'reason': 'polite phrasing'})}))\n"
    )
    r = km("eval", "--json", "--report-only", "--hedging-judge", f"{sys.executable} hedge.py", cwd=demo)
    assert r.returncode == 0, r.stderr
    gaps = {g["variant"]: g for g in json.loads(r.stdout)["gaps"]["variants"]}
    assert all(g["hedging_mode"] == "regex+llm" for g in gaps.values())
    basic = gaps["support-basic"]
    assert basic["signals_by_source"]["hedging"] == 0 and basic["hedging_dropped"] > 0  # the classifier said no


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        # a record lacking a top-level field is a missing task instead (tests/store/test_incomplete_records.py)
        (lambda r: r.__setitem__("grade", "x"), "grade: Input should be a valid dictionary"),
        (lambda r: r.__setitem__("analysis", [1]), "analysis: Input should be a valid dictionary"),
        (lambda r: r["grade"].__setitem__("layers", "x"), "grade.layers: Input should be a valid dictionary"),
        (lambda r: r["grade"].__setitem__("judges", [{"mean": 3}]), "grade.judges.0.judge: Field required"),
        (lambda r: r["grade"]["assertions"].append({"passed": "maybe"}), "grade.assertions."),
        (
            lambda r: r["exec"].__setitem__("usage", {"input_tokens": "many"}),
            "exec.usage.input_tokens: Input should be",
        ),
        (
            lambda r: r["analysis"]["gaps"].__setitem__("signals", [{"sample_id": "a", "source": "bogus"}]),
            "analysis.gaps.signals.0.source: Input should be",
        ),
        (lambda r: r["analysis"]["gaps"].pop("sample_id"), "analysis.gaps.sample_id: Field required"),
    ],
)
def test_a_damaged_results_file_is_one_line_naming_task_and_field(
    tmp_path: Path, demo: Path, demo_report: dict[str, Any], damage, expected: str
) -> None:
    import shutil

    run_id = demo_report["run"]["id"]
    runs = tmp_path / ".knowmeter" / "runs"
    shutil.copytree(demo / ".knowmeter" / "runs" / run_id, runs / run_id)
    results = runs / run_id / "results.jsonl"
    records = list(iter_results(results))
    damage(records[3])
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["report", run_id, "--json"])
    finally:
        os.chdir(old)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert f"results.jsonl: task {records[3]['task_id']!r}: " in lines[0] and expected in lines[0]


@pytest.mark.parametrize("command", [["gaps"], ["sample", "--from-gaps"]])
def test_a_damaged_report_json_is_one_line_naming_it(
    tmp_path: Path,
    demo: Path,
    demo_report: dict,  # type: ignore[type-arg]
    command: list[str],
) -> None:
    import shutil

    run_id = demo_report["run"]["id"]
    run_dir = tmp_path / ".knowmeter" / "runs" / run_id
    shutil.copytree(demo / ".knowmeter" / "runs" / run_id, run_dir)
    report = joined_report(run_dir)
    for g in report["gaps"]["variants"]:
        g["executed"] = -1
    (run_dir / "report.json").write_text(json.dumps(report))
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, [*command, run_id])
    finally:
        os.chdir(old)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert "report.json: gaps.variants.0: GapSummary.executed: must be >= 0, got -1" in lines[0]
    assert f"knowmeter report {run_id}" in lines[0]
