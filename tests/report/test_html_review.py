"""report.html without a browser, the review's findings: bidi controls in untrusted text shown as
their code, the budget table in dollars with unset limits said so, the reason a run has no paired
comparison, and unknown token counts shown as unknown."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

from knowmeter.report import Report
from knowmeter.report.html import render_html
from knowmeter.report.html._page import BIDI, TEMPLATES
from tests.report.test_html_static import Page


def _render(report: dict[str, Any]) -> tuple[Page, str]:
    page = Page(render_html(Report.model_validate(report)))
    return page, " ".join(" ".join(page.text).split())


def test_bidi_controls_in_the_template_text_are_shown_as_their_code(review_run: Path) -> None:
    report = json.loads((review_run / "report.json").read_text())
    signal = report["gaps"]["variants"][0]["signals"][0]
    signal["sample_id"], signal["context"] = "gap\u202e-1", "Grep \u2066x\u2069 \u200f"
    page, text = _render(report)
    assert "gap\u27e8U+202E\u27e9-1" in text and "Grep \u27e8U+2066\u27e9x\u27e8U+2069\u27e9 \u27e8U+200F\u27e9" in text
    assert not BIDI.search(" ".join(page.text))
    link = next(a for t, a in page.tags if t == "a" and "samplelink" in (a.get("class") or ""))
    assert link["href"] == "#sample=gap%E2%80%AE-1&repeat=1"  # the link keeps the real id


def test_the_page_script_shows_the_same_characters() -> None:
    script = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    found = re.search(r"var BIDI = /(\[[^\]]+\])/g;", script)
    assert found is not None
    assert codecs.decode(found.group(1), "unicode_escape") == BIDI.pattern
