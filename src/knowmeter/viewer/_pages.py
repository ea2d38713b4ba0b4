"""The viewer's pages (Jinja2 with autoescape, sharing the report's stylesheet)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

from markupsafe import Markup

from knowmeter.report import Report, ReportView, not_comparable
from knowmeter.report.html import Series, assets, environment, line_chart, page_script
from knowmeter.viewer._changes import CHANGES_SHOWN, changes
from knowmeter.watermark import WATERMARK_WARNING

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'"

#: trend charts: (index column, title, shown as a percentage)
TREND_METRICS = (("gap_rate", "gap rate", True), ("coverage", "coverage", True), ("composite", "composite", False))


def _render(template: str, *, csp: str = CSP, **context: Any) -> str:
    css = assets()[0]
    return environment().get_template(template).render(css=Markup(css), csp=csp, **context)


def compare_csp() -> str:
    """The compare page's policy: its script (by hash) may ask this viewer for the two runs' rows."""
    return page_script("compare.js")[1].replace("connect-src 'none'", "connect-src 'self'")


def runs_page(runs: list[dict[str, Any]]) -> str:
    return _render("viewer_runs.html.j2", title="knowmeter runs", runs=runs)


def compare_page(a: tuple[str, Report], b: tuple[str, Report]) -> str:
    views = [(run_id, ReportView(report)) for run_id, report in (a, b)]
    same_set = views[0][1].watermark.sha256 == views[1][1].watermark.sha256
    changed, n_changed = changes(views[0][1], views[1][1])
    return _render(
        "viewer_compare.html.j2",
        csp=compare_csp(),
        js=Markup(page_script("compare.js")[0]),
        title=f"knowmeter: {a[0]} vs {b[0]}",
        views=views,
        same_set=same_set,
        changed=changed,
        n_changed=n_changed,
        shown_cap=CHANGES_SHOWN,
    )


def _by_sample_set(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The rows per sample set, each set's oldest first."""
    ordered = sorted(rows, key=lambda r: (str(r["sample_set_id"]), r["created_at"], r["run_id"]))
    return {set_id: list(group) for set_id, group in groupby(ordered, key=lambda r: str(r["sample_set_id"]))}


def trend_series(rows: Sequence[dict[str, Any]], metric: str) -> dict[str, list[Series]]:
    """Per sample set, one series per variant over that set's runs (oldest first). Runs on
    different sample sets never share a series; nor do composites from different layer sets (a
    judge added later): such a variant has one series per layer set, named after it."""
    out: dict[str, list[Series]] = {}
    for set_id, runs in _by_sample_set(rows).items():
        run_ids = list(dict.fromkeys(r["run_id"] for r in runs))
        label = {r["run_id"]: f"{r['created_at'][:16]} {r['run_id']}" for r in runs}
        split = not_comparable(runs) if metric == "composite" else {}
        by_line: dict[str, dict[str, float | None]] = {}
        for r in runs:
            name = str(r["variant"])
            if name in split:
                name += f" ({r['layer_set'] or 'layer set unknown'})"
            by_line.setdefault(name, {})[r["run_id"]] = r[metric]
        out[set_id] = [
            Series(name=name, points=[(label[i], values.get(i)) for i in run_ids]) for name, values in by_line.items()
        ]
    return out


def trends_page(rows: list[dict[str, Any]]) -> str:
    sets: dict[str, dict[str, Any]] = {
        set_id: {
            "charts": [],
            "count": runs[-1]["sample_count"],
            "runs": len({r["run_id"] for r in runs}),
            "not_comparable": not_comparable(runs),
        }
        for set_id, runs in _by_sample_set(rows).items()
    }
    for metric, title, percent in TREND_METRICS:
        for set_id, series in trend_series(rows, metric).items():
            sets[set_id]["charts"].append(
                line_chart(
                    series, title=f"{title} · sample set {set_id}", y_label=title, x_label="run", percent=percent
                )
            )
    return _render("viewer_trends.html.j2", title="knowmeter trends", sets=sets, warning=WATERMARK_WARNING)


def error_page(status: int, message: str) -> str:
    return _render("viewer_error.html.j2", title=f"{status}", status=status, message=message)
