"""Issue 33 point 5: a row's detail shows the sample's prompt — from the sample as the task was
given it, whatever the agent recorded (a script agent records no user message at all); a record
from before the prompt was stored falls back to the trace's first user message."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from knowmeter.report import Report, ReportView
from knowmeter.report.html._payload import payload
from tests.support.cli import init_demo, km

pytestmark = pytest.mark.slow

SILENT_AGENT = "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'output': 'refunds within 30 days'}))\n"


def test_the_detail_shows_the_samples_prompt_whatever_the_agent_recorded(tmp_path: Path) -> None:
    demo = init_demo(tmp_path / "demo")
    (demo / "agent.py").write_text(SILENT_AGENT)
    ran = km("eval", "--executor", f"{sys.executable} agent.py", "--json", cwd=demo)
    data = json.loads(ran.stdout)
    listed = yaml.safe_load((demo / "eval-samples.yaml").read_text())["samples"]
    samples = {s["sample_id"]: s["prompt"] for s in listed}
    assert all(samples[t["sample_id"]] in t["prompt"] for t in data["tasks"])  # the sample's own prompt
    first = data["tasks"][0]
    assert first["prompt"] and not any(e.get("role") == "user" for e in first["exec"]["trace"]["events"])
    rows = payload(ReportView(Report.model_validate(data)))["rows"]
    by_id = {t["sample_id"]: t["prompt"] for t in data["tasks"]}
    assert all(r["prompt"] and r["prompt"][0] == by_id[r["id"]][: len(r["prompt"][0])] for r in rows)

    legacy = {**data, "tasks": [{k: v for k, v in t.items() if k != "prompt"} for t in data["tasks"]]}
    legacy_rows = payload(ReportView(Report.model_validate(legacy)))["rows"]
    assert all(r["prompt"] in ([], [""]) or not r["prompt"][0] for r in legacy_rows)  # nothing recorded: no prompt
