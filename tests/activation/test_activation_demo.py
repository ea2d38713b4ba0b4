"""The offline demo's activation example: ``knowmeter init`` then the command it prints runs with
no keys and shows the sharper description winning (PROGRESS) on recall with no false activation."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from knowmeter.activation import ActivationReport
from knowmeter.cli._init import ACTIVATION_DEMO
from tests.support.cli import km


def test_demo_activation_example_runs_offline(tmp_path: Path) -> None:
    init = km("init", "demo", cwd=tmp_path)
    assert init.returncode == 0 and f"knowmeter activation {ACTIVATION_DEMO}" in init.stdout
    r = km("activation", *shlex.split(ACTIVATION_DEMO), "--json", cwd=tmp_path / "demo")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    a, b = report["arms"]
    assert report["verdict"] == "PROGRESS" and report["distractors"] == ["billing", "security"]
    assert (a["recall"]["successes"], b["recall"]["successes"], b["recall"]["trials"]) == (3, 18, 18)
    assert a["false_activation_rate"]["successes"] == b["false_activation_rate"]["successes"] == 0
    # the vague description loses a prompt to a distractor: the confusion list says which
    chargeback = next(c for c in a["confusion"] if c["case_id"] == "chargeback")
    assert chargeback["loaded_instead"] == ["billing"]
    recall = report["comparisons"][0]["changes"][0]
    assert recall["significant"] and recall["low"] > 0


def test_markdown_and_junit_of_the_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    km("init", "demo", cwd=tmp_path)
    args = ("--markdown", "s.md", "--junit", "j.xml")
    r = km("activation", *shlex.split(ACTIVATION_DEMO), *args, cwd=tmp_path / "demo")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "demo" / "s.md").read_text()
    assert md.startswith("## knowmeter activation: PROGRESS — skill `refunds`")
    assert "| recall | 0.17 | [0.03, 0.60] | 3/18 over 6 case(s) |" in md
    assert "- ✗ `chargeback`: should fire, fired 0/3; loaded instead: billing" in md
    assert summary.read_text() == md + "\n"
    suite = ET.parse(tmp_path / "demo" / "j.xml").getroot()
    cases = suite.findall("testcase")
    assert len(cases) == 12 * 2 + 1 and suite.get("tests") == "25"
    failed = sorted((c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None)
    assert failed == [
        ("activation.refunds.A", n)
        for n in ("cancel-window", "chargeback", "charged-twice", "money-back", "unused-months")
    ]
    assert suite.get("failures") == "5" and cases[-1].get("name") == "outcome"


def test_html_page_is_self_contained_and_escapes_what_the_run_wrote(tmp_path: Path) -> None:
    from knowmeter.activation._html import html_report

    km("init", "demo", cwd=tmp_path)
    r = km("activation", *shlex.split(ACTIVATION_DEMO), "--json", cwd=tmp_path / "demo")
    report = ActivationReport.model_validate_json(r.stdout)
    (page,) = (tmp_path / "demo").glob(".knowmeter/activation/runs/*/activation.html")
    text = page.read_text()
    assert text == html_report(report) and text.startswith("<!doctype html>")
    assert "<script" not in text and "http" not in text and "<svg" in text
    assert "[0.03, 0.60]" in text and "<code>chargeback</code>: should fire, fired 0/3; loaded instead: billing" in text
    hostile = report.model_copy(update={"skill": "<script>alert(1)</script>", "notes": ["<img src=x>"]})
    assert "<script>" not in html_report(hostile) and "&lt;img src=x&gt;" in html_report(hostile)


def test_split_judges_the_held_out_cases(tmp_path: Path) -> None:
    km("init", "demo", cwd=tmp_path)
    r = km("activation", *shlex.split(ACTIVATION_DEMO), "--split", "--json", cwd=tmp_path / "demo")
    report = json.loads(r.stdout)
    assert [c["part"] for c in report["comparisons"]] == ["all", "tune", "held-out"]
    tune, held = report["split"]["tune"], report["split"]["held-out"]
    assert len(tune) == 8 and len(held) == 4 and not set(tune) & set(held)
    # 4 held-out cases (2 of each kind) cannot show a change: UNDERPOWERED, whatever the whole set says
    assert report["verdict"] == "UNDERPOWERED" and r.returncode == 1
    assert report["reasons"][0] == "judged on the held-out 4 case(s) (--split):"
    held_out = report["comparisons"][2]["changes"][0]
    assert held_out["cases"] == 2
