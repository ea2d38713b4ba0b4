"""The HTML report checked without a browser: written by eval and by ``report --html``, content
in the issue's order taken from report.json, every dynamic value escaped, nothing fetched."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import Report, joined_report
from knowmeter.report._view import ReportView
from knowmeter.report.html import render_html
from knowmeter.report.html._payload import script_json
from tests.report.report_support import HOSTILE
from tests.support.cli import km, km_process


class Page(HTMLParser):
    """Every start tag with its attributes, script bodies, and the page's visible text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.text: list[str] = []
        self._script: dict[str, str | None] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            attrs, body = self.scripts[-1]
            self.scripts[-1] = (attrs, body + data)
        else:
            self.text.append(data)

    def ids(self) -> list[str]:
        return [a["id"] or "" for _, a in self.tags if a.get("id")]


def _report(run: Path) -> dict[str, Any]:
    report: dict[str, Any] = joined_report(run)
    return report


@pytest.mark.slow
def test_eval_writes_report_html_with_the_sections_in_order(demo_run: Path) -> None:
    html = (demo_run / "report.html").read_text()
    page = Page(html)
    ids = page.ids()
    order = ["verdict", "variants", "comparisons", "gaps", "samples", "provenance"]
    assert [i for i in ids if i in order] == order
    report = _report(demo_run)
    pill = next(a for t, a in page.tags if a.get("data-testid") == "verdict-pill")
    decision = report["decision"]
    assert pill["class"] == f"pill v-{decision['outcome'].lower()}"
    text = " ".join(page.text)
    assert decision["headline"] in text and decision["recommendation"] in text
    for line in report["verdict"]["rationale"]:
        assert line in text
    assert report["run"]["watermark"]["warning"] in text
    for v in report["variants"]:
        assert v["artifact_hash"] in text  # provenance: variant hashes


def test_the_embedded_data_is_the_reports_tasks(demo_run: Path) -> None:
    report = _report(demo_run)
    page = Page((demo_run / "report.html").read_text())
    blob = next(body for attrs, body in page.scripts if attrs.get("type") == "application/json")
    data = json.loads(blob)
    assert data["control"] == report["statistics"]["control"]
    rows = {(r["id"], r["r"]): r for r in data["rows"]}
    assert len(rows) == len({(t["sample_id"], t["repeat"]) for t in report["tasks"]})
    for t in report["tasks"]:
        shown = rows[(t["sample_id"], t["repeat"])]["v"][t["variant"]]
        assert shown["out"] == [t["exec"]["output"], 0]
        assert shown["c"] == t["grade"]["composite"] and shown["ok"] == t["grade"]["passed"]
        assert [a[2] for a in shown["as"]] == [a["message"] for a in t["grade"]["assertions"]]
        calls = [e for e in t["exec"]["trace"]["events"] if e["kind"] == "tool_call"]
        assert [s["tool"] for s in shown["tl"] if s["k"] == "call"] == [c["tool"] for c in calls]


@pytest.mark.slow
def test_report_html_flag_writes_the_page_from_stored_results(demo_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "page.html"
    r = km_process("report", str(demo_run), "--html", str(target), "--report-only", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"html report: {target}" in r.stdout
    assert 'data-testid="verdict-pill"' in target.read_text()


def test_report_rewrites_the_runs_page_with_the_report_json(demo_run: Path, tmp_path: Path) -> None:
    """``knowmeter report`` with an override rewrites report.json; the run's report.html must not
    keep showing the verdict it had before."""
    store = tmp_path / "store"
    shutil.copytree(demo_run.parents[1], store)
    run = store / "runs" / demo_run.name

    def pill() -> str:
        html = (run / "report.html").read_text()
        return str(re.findall(r'data-testid="verdict-pill">([^<]*)<', html)[0])

    def outcome() -> str:
        return str(joined_report(run)["decision"]["outcome"])

    before = pill()
    assert before == outcome()
    r = km("report", str(run), "--threshold", "5", "--report-only", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert outcome() != before and pill() == outcome()
    elsewhere = tmp_path / "copy.html"
    km("report", str(run), "--html", str(elsewhere), "--report-only", cwd=tmp_path)
    assert elsewhere.read_text() == (run / "report.html").read_text()  # both pages written, alike


def _first_variant_row(html: str) -> str:
    section = html[html.index('<section id="variants">') : html.index('<section id="comparisons">')]
    row = section[section.index("<tbody>") :].split("</tr>")[0]
    return " ".join(Page(row).text)


def test_a_missing_figure_reads_unknown_never_zero(demo_run: Path) -> None:
    report = _report(demo_run)
    before = _first_variant_row(render_html(Report.model_validate(report)))
    report["variants"][0]["cost"]["known_usd"] = None
    report["variants"][0]["latency_ms"] = None
    after = _first_variant_row(render_html(Report.model_validate(report)))
    assert "unknown" not in before and "$0.0000" in before
    assert after.count("unknown") == 2 and "$" not in after


def test_a_report_without_tasks_or_verdict_still_renders(demo_run: Path) -> None:
    report = _report(demo_run)
    for key in ("tasks", "verdict", "decision", "comparisons", "gaps", "coverage"):
        report.pop(key)
    page = Page(render_html(Report.model_validate(report)))
    assert "NO VERDICT" in " ".join(page.text)


@pytest.mark.slow
def test_hostile_content_is_escaped_everywhere(hostile_run: Path) -> None:
    html = (hostile_run / "report.html").read_text()
    page = Page(html)
    # exactly two scripts: the JSON data (never executed) and the page's own, allowed by its hash
    assert [a.get("type") for a, _ in page.scripts] == ["application/json", None]
    own = page.scripts[1][1]
    digest = base64.b64encode(hashlib.sha256(own.encode()).digest()).decode()
    csp = next(a["content"] for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy")
    assert csp is not None
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp
    for tag, attrs in page.tags:
        assert tag not in {"img", "textarea", "iframe", "object", "embed"}, (tag, attrs)
        for url in (attrs.get("href"), attrs.get("src"), attrs.get("xlink:href"), attrs.get("action")):
            assert not (url or "").strip().lower().startswith("javascript:"), (tag, attrs)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if tag == "svg":
            assert attrs.get("class") in {"forest", "chart"}
    # the payloads are in the page only as escaped text or inside the escaped JSON blob
    for payload in HOSTILE:
        assert payload not in html or "<" not in payload
    data = json.loads(page.scripts[0][1])
    outputs = [t["out"][0] for row in data["rows"] for t in row["v"].values()]
    assert all(all(p in out for p in HOSTILE) for out in outputs)
    assert {row["id"] for row in data["rows"]} == {t["sample_id"] for t in _report(hostile_run)["tasks"]}
    text = " ".join(page.text)
    assert any(p in text for p in HOSTILE[:6])  # sample ids in the gap inventory, as text


def test_script_json_cannot_end_its_element() -> None:
    evil = {"x": "</script><script>alert(1)</script><!-- \u2028 & <\\/script>"}
    out = script_json(evil)
    assert not re.search(r"[<>&\u2028\u2029]", out)
    assert json.loads(out) == evil


def test_view_reads_the_stored_figures_without_recomputing(demo_run: Path) -> None:
    report = _report(demo_run)
    view = ReportView(Report.model_validate(report))
    comp = view.comparisons[0]
    stored = report["comparisons"][0]["metrics"]["composite"]
    method = stored["decision_ci"]
    row = next(m for m in comp.metrics if m.metric == "composite")
    assert (row.diff.estimate, row.diff.low, row.diff.high) == (
        stored["diff"]["estimate"],
        stored["diff"][method]["low"],
        stored["diff"][method]["high"],
    )
    assert row.mde == stored["mde"] and row.n_needed == stored["n_needed"]
    assert [v.name for v in view.variants] == [v["name"] for v in report["variants"]]
    assert sum(len(s.tasks) for s in view.samples()) == len(report["tasks"])
