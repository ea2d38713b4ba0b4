"""knowmeter observe --html on the real reference traces: the page shows the health report's
own figures under the trace-set watermark, with no script at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import km_process

from .test_html_static import Page

pytestmark = pytest.mark.slow


def test_observe_html_shows_the_health_report(shared_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "health.html"
    r = km_process("observe", str(shared_dir / "reference" / "traces"), "--json", "--html", str(target), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    health = json.loads(r.stdout)
    assert f"html report: {target}" in r.stderr
    page = Page(target.read_text())
    assert page.scripts == []
    text = " ".join(page.text)
    pill = next(a for t, a in page.tags if a.get("data-testid") == "band-pill")
    assert pill["class"] == f"pill band-{health['overall']['band']}"
    assert health["watermark"]["id"] in text and health["watermark"]["warning"] in text
    for skill in health["skills"]:
        assert skill["skill"] in text
        for signal in skill["gaps"]["signals"][:200]:
            assert signal["context"] in text
    for skipped in health["trace_set"]["skipped_files"]:
        assert skipped in text
    assert f"{100 * health['overall']['tool_failure_rate']:.1f}%" in text
