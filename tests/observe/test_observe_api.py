"""``knowmeter.observe_traces``: the health report ``knowmeter observe`` prints, as an object."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowmeter
from knowmeter.observe import HealthReport


def test_observe_traces_returns_the_health_report_the_command_prints(traces: Path) -> None:
    report = knowmeter.observe_traces([traces / "claude-projects", traces / "codex-sessions"], workers=1)
    assert isinstance(report, HealthReport)
    assert {"pdf", "deploy", "imagegen", "review-pr", "(no skill)"} == {s.skill for s in report.skills}
    assert report.watermark.count == sum(s.segments for s in report.skills) == 7
    only = knowmeter.observe_traces([traces], skills=["pdf"], since="2026-03-15", workers=1)
    assert [s.skill for s in only.skills] == ["pdf"]


def test_observe_traces_bad_input_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(knowmeter.InputError, match="--last and --since"):
        knowmeter.observe_traces([tmp_path], last="7d", since="2026-01-01")
    with pytest.raises(knowmeter.InputError, match="no session files found"):
        knowmeter.observe_traces([tmp_path])
