"""Checks that every output of a run shows its one decision (issue 36 point 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

from knowmeter.decision import command_exit_code
from knowmeter.exit_codes import EXIT_OK
from knowmeter.report import Decision, Report, index_rows, write_outputs


def assert_outputs_show(report: Report, decision: Decision, folder: Path) -> None:
    """report.json (and a read back), the run index row (``knowmeter runs``), the command's exit
    code, Markdown, HTML and JUnit all show ``decision``: none decides again from the verdict, the
    gates or the run's status. ``folder`` (created) receives the written files."""
    stored = json.loads(json.dumps(report.to_dict(tasks=False)))
    assert stored["decision"]["outcome"] == decision.outcome and stored["exit_code"] == decision.exit_code
    assert Report.model_validate(stored).exit_code == decision.exit_code  # read back: from the decision
    folder.mkdir()
    row, _ = index_rows(report, folder)
    assert (row["outcome"], row["verdict"]) == (decision.outcome, decision.verdict)
    assert command_exit_code(report.decision) == decision.exit_code
    write_outputs(report, html=folder / "r.html", junit=folder / "j.xml", markdown=folder / "m.md")
    markdown = (folder / "m.md").read_text()
    assert f"**{decision.outcome}**" in markdown and f"exit code {decision.exit_code}" in markdown
    html = (folder / "r.html").read_text()
    pill = re.search(r'data-testid="verdict-pill">([^<]*)<', html)
    assert pill is not None and pill.group(1) == decision.outcome
    assert re.findall(r"exit code <b>(\d+)</b>", html) == [str(decision.exit_code)]
    suite = ElementTree.fromstring((folder / "j.xml").read_text()).find("testsuite[@name='knowmeter.outcome']")
    assert suite is not None
    case = suite.find("testcase")
    assert case is not None and case.get("name") == f"outcome {decision.outcome}"
    assert (case.find("failure") is not None) == (decision.exit_code != EXIT_OK)
