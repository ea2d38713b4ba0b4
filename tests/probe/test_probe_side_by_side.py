"""The probe gap rate beside the human-sample gap rate: recorded kind of sample set, the report's
``probe_comparison`` section, ``knowmeter gaps`` and ``trends`` — on the demo with the offline agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.probe import SIDE_BY_SIDE_WARNING
from knowmeter.report import Report
from knowmeter.samples import Sample, load_samples, sample_set_info
from knowmeter.store import find_run, read_json


def _eval(*args: str) -> dict[str, Any]:
    """Run eval and return the new run's report (not "latest": two runs can share a second)."""
    runs = Path(".knowmeter/runs")
    before = set(runs.iterdir()) if runs.is_dir() else set()
    res = CliRunner().invoke(cli, ["eval", *args])
    assert res.exit_code in (0, 1), res.output
    [new] = set(runs.iterdir()) - before
    report: dict[str, Any] = read_json(find_run(Path(".knowmeter"), new.name).report_file)
    return report


def _accessed(report: dict[str, Any], variant: str) -> tuple[set[str], set[str]]:
    cov = next(c for c in report["coverage"]["variants"] if c["variant"] == variant)
    return ({f["path"] for f in cov["files"]}, {f["path"] for f in cov["files"] if f["accesses"] > 0 or f["injected"]})


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    init = CliRunner().invoke(cli, ["init", str(tmp_path / "demo")])
    assert init.exit_code == 0 and "knowmeter probe && knowmeter eval --samples probe-samples.yaml" in init.output
    monkeypatch.chdir(tmp_path / "demo")
    # a small human-written set that only asks about refunds and billing
    samples = yaml.safe_load(Path("eval-samples.yaml").read_text(encoding="utf-8"))["samples"]
    Path("human.yaml").write_text(
        yaml.safe_dump([s for s in samples if s["capability"] in ("refunds", "billing")][:3]), encoding="utf-8"
    )
    return tmp_path / "demo"


def test_probe_gap_rate_beside_the_human_one(demo: Path) -> None:
    human = _eval("--samples", "human.yaml")
    assert human["run"]["sample_set"]["kind"] == "human"
    assert "probe_comparison" not in human  # nothing to put beside it yet

    assert CliRunner().invoke(cli, ["probe", "--samples", "human.yaml"]).exit_code == 0
    probe = _eval("--samples", "probe-samples.yaml")
    info = probe["run"]["sample_set"]
    assert info["kind"] == "probe" and info["probe_samples"] == 6 and info["generators"] == ["headings"]
    Report.model_validate(probe)

    side = probe["probe_comparison"]
    assert side["kind"] == "probe" and side["warning"] == SIDE_BY_SIDE_WARNING and side["note"] is None
    assert [r["variant"] for r in side["variants"]] == ["support-basic", "support-expert"]
    for row in side["variants"]:
        name = row["variant"]
        h_gaps = next(g for g in human["gaps"]["variants"] if g["variant"] == name)
        p_gaps = next(g for g in probe["gaps"]["variants"] if g["variant"] == name)
        # each side under its own watermark, its own numbers: nothing merged
        assert row["human"]["run_id"] == human["run"]["id"] and row["probe"]["run_id"] == probe["run"]["id"]
        assert row["human"]["gap_rate"] == h_gaps["gap_rate"] and row["probe"]["gap_rate"] == p_gaps["gap_rate"]
        assert row["human"]["watermark"] == human["run"]["watermark"]
        assert row["probe"]["watermark"]["count"] == 6 and row["human"]["watermark"]["count"] == 3
        (h_all, h_hit), (p_all, p_hit) = _accessed(human, name), _accessed(probe, name)
        assert row["files_only_probe"] == sorted(p_hit - h_hit)
        assert row["files_unreached"] == sorted((h_all | p_all) - h_hit - p_hit)
    expert = side["variants"][1]
    assert "knowledge/plans.md" in expert["files_only_probe"]  # no human sample asks about plans

    gaps = CliRunner().invoke(cli, ["gaps", human["run"]["id"], "--variant", "support-expert"])
    assert gaps.exit_code == 0
    text = gaps.output
    assert "Probe vs human samples (gap-signal spec §9) — side by side, never one number" in text
    assert f"run {probe['run']['id']} · sample set probe-samples.yaml · 6 samples" in text
    assert "files reached only by probe questions: " in text and "knowledge/plans.md" in text
    assert "never add, average or rank them as one number" in text
    as_json = json.loads(CliRunner().invoke(cli, ["gaps", human["run"]["id"], "--json"]).output)
    assert as_json["probe_comparison"]["kind"] == "human"
    assert [r["probe"]["run_id"] for r in as_json["probe_comparison"]["variants"]] == [probe["run"]["id"]] * 2

    # knowmeter report re-renders it from the store; report.html shows it under the gaps
    rendered = CliRunner().invoke(cli, ["report", probe["run"]["id"], "--html", "page.html"])
    assert rendered.exit_code in (0, 1) and "Probe vs human samples" in rendered.output
    page = Path("page.html").read_text(encoding="utf-8")
    assert 'data-testid="probe-comparison"' in page and "files reached only by probe questions" in page
    assert "never add, average or rank them as one number" in page and "<code>knowledge/plans.md</code>" in page

    trends = CliRunner().invoke(cli, ["trends"])
    assert trends.exit_code == 0
    assert "probe-samples.yaml@" in trends.output and "· probe set (knowmeter probe)" in trends.output
    assert "Probe vs human samples, latest run of each" in trends.output
    blocks = json.loads(CliRunner().invoke(cli, ["trends", "--json"]).output)
    assert sorted(b["kind"] for b in blocks) == ["human", "probe"]


def test_sample_set_kind() -> None:
    human = Sample(sample_id="h", prompt="q")
    probe = Sample.from_record(
        {
            "sample_id": "p",
            "prompt": "q",
            "provenance": "probe",
            "probe": {"generator": "headings", "prompt_hash": "ab", "kb_sha256": "cd"},
        }
    )
    assert sample_set_info([human])["kind"] == "human"
    assert sample_set_info([probe]) == {
        "kind": "probe",
        "probe_samples": 1,
        "generators": ["headings"],
        "prompt_hashes": ["ab"],
        "kb_sha256": ["cd"],
    }
    assert sample_set_info([human, probe])["kind"] == "mixed"
    assert sample_set_info([])["kind"] == "human"


def test_a_mixed_set_says_its_gap_rate_blends_both(demo: Path) -> None:
    assert CliRunner().invoke(cli, ["probe", "--samples", "human.yaml", "--count", "2"]).exit_code == 0
    both = yaml.safe_load(Path("human.yaml").read_text()) + yaml.safe_load(Path("probe-samples.yaml").read_text())
    Path("mixed.yaml").write_text(yaml.safe_dump(both), encoding="utf-8")
    assert len(load_samples(Path("mixed.yaml")).samples) == 5
    report = _eval("--samples", "mixed.yaml")
    assert report["run"]["sample_set"]["kind"] == "mixed"
    assert "blends both" in report["probe_comparison"]["note"] and report["probe_comparison"]["variants"] == []
