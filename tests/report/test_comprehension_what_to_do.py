"""A comprehension run's decision says what to do (its "What to do:" was empty on the page, in
report.json and in the Markdown): the demo's SHALLOW verdict asks for the skill to be fixed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.cli import km_process


@pytest.mark.slow
def test_comprehension_decision_and_page_say_what_to_do(comprehension_run: Path) -> None:
    decision = json.loads((comprehension_run / "report.json").read_text())["decision"]
    assert decision["outcome"] == "SHALLOW"
    assert decision["recommendation"].startswith("FIX THE SKILL — with it the agent fails the dimensions")
    page = (comprehension_run / "report.html").read_text()
    said = re.search(r'data-testid="what-to-do"><span class="sub">What to do:</span>([^<]*)</p>', page)
    assert said is not None and said.group(1).strip() == decision["recommendation"].replace("'", "&#39;")
    project = comprehension_run.parents[2]
    r = km_process("report", comprehension_run.name, "--markdown", "c.md", cwd=project)
    assert r.returncode == 1, r.stderr
    assert decision["recommendation"] in (project / "c.md").read_text()
