"""A gold comparison is stored with its run and becomes the audit's human-aligned badge:
`eval` with a scripted judge → `gold compare` (a custom --output-dir) → `report`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner, Result

from knowmeter.cli import cli

pytestmark = pytest.mark.slow

JUDGE = """\
import json, sys
req = json.load(sys.stdin)
score = 2 if "I'm not sure" in req["prompt"] else 4
print(json.dumps({"output": json.dumps({"reasoning": "scripted", "score": score, "reason": "ok"}), "costUSD": 0.001}))
"""


def _km(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def judged_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A demo run in the store ``store/`` whose every task has a judge score; cwd is the demo."""
    monkeypatch.chdir(tmp_path)
    assert _km("init", "d").exit_code == 0
    monkeypatch.chdir(tmp_path / "d")
    Path("judge.py").write_text(JUDGE, encoding="utf-8")
    r = _km("eval", "--report-only", "--output-dir", "store", "--judge", f"{sys.executable} judge.py:judge-model")
    assert r.exit_code == 0, r.output
    return tmp_path / "d"


def _judge_means(report: dict) -> dict[str, dict[str, float]]:  # type: ignore[type-arg]
    means: dict[str, dict[str, list[float]]] = {}
    for task in report["tasks"]:
        means.setdefault(task["variant"], {}).setdefault(task["sample_id"], []).append(task["grade"]["layers"]["judge"])
    return {v: {s: float(np.mean(xs)) for s, xs in per.items()} for v, per in means.items()}


def _write_gold(directory: Path, scores: dict[str, float]) -> None:
    directory.mkdir()
    (directory / "metadata.yaml").write_text("metadata:\n  annotator: alice\n  scale: {min: 1, max: 5}\n")
    lines = ["annotations:"] + [f"  - sample_id: {sid}\n    score: {score:g}" for sid, score in scores.items()]
    (directory / "annotations.yaml").write_text("\n".join(lines) + "\n")


def test_gold_compare_is_stored_and_the_report_audit_uses_it(judged_run: Path) -> None:
    before = json.loads(_km("report", "latest", "--output-dir", "store", "--json", "--report-only").stdout)
    assert before["audit"]["human_aligned"]["status"] == "unknown"
    means = _judge_means(before)
    # a human who agrees with the judge on the control's answers except for two samples
    gold = dict(means["support-basic"])
    for sid in sorted(gold)[:2]:
        gold[sid] = 1.0 if gold[sid] > 3 else 5.0
    _write_gold(judged_run / "gold", gold)

    r = _km("gold", "compare", "latest", "--output-dir", "store", "--gold-dir", "gold", "--bootstrap-samples", "500")
    assert r.exit_code == 0, r.output
    run_dir = next((judged_run / "store" / "runs").iterdir())
    assert f"stored: {Path('store') / 'runs' / run_dir.name / 'gold.json'}" in r.output
    stored = json.loads((run_dir / "gold.json").read_text())
    assert stored["schema_version"] == 1 and set(stored["comparisons"]) == {"support-basic", "support-expert"}
    assert stored["gold"]["annotator"] == "alice" and len(stored["gold"]["sha256"]) == 16
    assert stored["comparisons"]["support-basic"]["judges"] == [f"{sys.executable} judge.py:judge-model", "judge-model"]

    after = json.loads(_km("report", "latest", "--output-dir", "store", "--json", "--report-only").stdout)
    check = after["audit"]["human_aligned"]
    worst = min(stored["comparisons"].values(), key=lambda c: c["alpha_interval"])
    ids = sorted(gold)
    chosen = next(v for v, c in stored["comparisons"].items() if c is worst)
    data = np.array([[gold[s] for s in ids], [means[chosen][s] for s in ids]])
    assert check["value"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    assert check["status"] == ("pass" if check["value"] >= 0.8 else "warn" if check["value"] >= 0.667 else "fail")
    assert check["n"] == len(ids) and check["interval"]["b"] == 500
    assert check["interval"] == worst["alpha_ci_bca"] or check["interval"] == worst["alpha_ci_percentile"]
    assert f"variant {chosen}" in check["detail"] and stored["gold"]["sha256"] in check["detail"]


def test_a_changed_result_makes_the_stored_comparison_stale(judged_run: Path) -> None:
    report = json.loads(_km("report", "latest", "--output-dir", "store", "--json", "--report-only").stdout)
    samples = sorted(_judge_means(report)["support-basic"])
    _write_gold(judged_run / "gold", {s: 3.0 + (i % 2) for i, s in enumerate(samples)})
    assert (
        _km(
            "gold", "compare", "latest", "--output-dir", "store", "--gold-dir", "gold", "--bootstrap-samples", "200"
        ).exit_code
        == 0
    )
    run_dir = next((judged_run / "store" / "runs").iterdir())
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["grade"]["layers"]["judge"] = 1.0 if first["grade"]["layers"]["judge"] != 1.0 else 5.0
    (run_dir / "results.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    after = json.loads(_km("report", "latest", "--output-dir", "store", "--json", "--report-only").stdout)
    check = after["audit"]["human_aligned"]
    assert check["status"] == "unknown" and check["value"] is None
    assert "judge scores changed since the gold comparison" in check["detail"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{not json", "invalid JSON"),
        ('{"schema_version": 99}', "schema_version 99 is newer"),
        ('{"schema_version": 1, "comparisons": {}}', "the file was edited or damaged"),
    ],
)
def test_a_damaged_gold_file_is_one_line(judged_run: Path, text: str, match: str) -> None:
    run_dir = next((judged_run / "store" / "runs").iterdir())
    (run_dir / "gold.json").write_text(text)
    r = CliRunner().invoke(cli, ["report", "latest", "--output-dir", "store", "--report-only"])
    assert r.exit_code == 2 and match in r.stderr and "gold.json" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
