"""Render a report page with Jinja2 (autoescape on). The page's script is allowed by its hash in
a Content-Security-Policy that also forbids every network fetch, so even markup that slipped
through escaping could neither run nor load anything."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import pickle
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2.bccache import Bucket
from markupsafe import Markup

from knowmeter import defaults
from knowmeter.report._cost_text import known_cost_text
from knowmeter.report._model import Report
from knowmeter.report._view import Comparison, ReportView
from knowmeter.report.html._inventory import INVENTORY_ROWS, inventories
from knowmeter.report.html._payload import DETAIL_ROWS, payload, script_json
from knowmeter.report.html._plain import plain_summary
from knowmeter.report.html._svg import ForestRow, Series, forest_plot, line_chart
from knowmeter.report.html._text import visible

TEMPLATES = Path(__file__).with_name("templates")
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def fmt(value: Any, spec: str = ".2f") -> str:
    """A number formatted, or ``unknown`` (never a fake 0)."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and spec == ".2f":
        return str(value)
    if isinstance(value, int | float):
        return format(value, spec)
    return str(value)


def id_key(value: Any) -> tuple[int, float, str]:
    """Sort key of an id: numbers first in numeric order ("2" before "10"), then text."""
    text = str(value)
    return (0, float(text), text) if _NUMBER.fullmatch(text.strip()) else (1, 0.0, text)


def by_id(cases: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Comprehension cases by their ``case_id`` (:func:`id_key`)."""
    return sorted(cases, key=lambda c: id_key(c.get("case_id")))


def pct(value: Any) -> str:
    """A share as a percentage to one place, or ``unknown``; a share that rounds to zero is
    "0.0%", never "-0.0%"."""
    return "unknown" if value is None else f"{round(100 * float(value), 1) + 0.0:.1f}%"


def usd(value: Any) -> str:
    """Dollars to four places, as everywhere on the page (``$0.0052``), or ``unknown``."""
    return "unknown" if value is None else f"${float(value):.4f}"


def budget_rows(budget: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The budget table's (label, value) rows: a limit that was not configured is "not set", no
    overshoot is "none", the note only when there is one, the spend per kind of model call."""
    rows = [
        ("total limit", "not set" if budget.get("total_usd") is None else usd(budget["total_usd"])),
        ("per-task limit", "not set" if budget.get("per_task_usd") is None else usd(budget["per_task_usd"])),
        ("spent (known costs)", usd(budget.get("spent_known_usd"))),
        ("tasks with a known cost", fmt(budget.get("tasks_with_known_cost"))),
        ("tasks with an unknown cost", fmt(budget.get("tasks_with_unknown_cost"))),
        ("tasks not started for the budget", fmt(budget.get("tasks_not_started_for_budget"))),
    ]
    for kind, calls in (budget.get("calls") or {}).items():
        rows.append(
            (
                f"{kind} calls",
                f"{fmt(calls.get('known_cost'))} with a known cost ({usd(calls.get('spent_known_usd'))}), "
                f"{fmt(calls.get('unknown_cost'))} with an unknown cost",
            )
        )
    if budget.get("in_flight_calls"):
        rows.append(
            (
                "calls in flight when a leg was killed",
                f"{fmt(budget['in_flight_calls'])} charged {usd(budget.get('in_flight_charged_usd'))} at their "
                f"reservation, their real cost unknown ({fmt(budget.get('in_flight_unknown_cost'))} not charged: "
                "no cost of their kind was known)",
            )
        )
    rows.append(("overshoot", "none" if budget.get("overshoot_usd") is None else usd(budget["overshoot_usd"])))
    if budget.get("note"):
        rows.append(("note", str(budget["note"])))
    return rows


class _TemplateCache(FileSystemBytecodeCache):
    """Jinja's compiled templates, kept in its private per-user temporary directory so that a run
    does not compile the report template again (``bench/bench_html.py``, design/decisions.md). A
    cache file that cannot be read (damaged) or written is skipped: the template is compiled and
    the page rendered all the same."""

    #: what the compiled code depends on besides a template's source: code compiled under other
    #: environment settings (before ``finalize`` showed bidi controls) is compiled again
    SETTINGS = b"finalize=visible"

    def get_source_checksum(self, source: str) -> str:
        return hashlib.sha1(self.SETTINGS + source.encode("utf-8"), usedforsecurity=False).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):
            bucket.reset()  # compiled again, and the damaged file replaced

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _template_cache() -> _TemplateCache | None:
    try:
        return _TemplateCache()
    except (OSError, RuntimeError):  # no private temporary directory for this user
        return None


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        bytecode_cache=_template_cache(),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        finalize=visible,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    env.filters["pct"] = pct
    env.filters["usd"] = usd
    env.filters["known_cost"] = known_cost_text
    env.filters["by_id"] = by_id
    env.globals["layers"] = defaults.LAYERS
    return env


@cache
def page_script(name: str) -> tuple[str, str]:
    """(the script of a page — the shared detail component ``detail.js`` followed by ``name`` — and
    its CSP: the script's sha256 goes into the policy, which forbids every fetch)."""
    js = "\n".join((TEMPLATES / f).read_text(encoding="utf-8") for f in ("detail.js", name))
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode()
    csp = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
        "connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
    return js, csp


@cache
def assets() -> tuple[str, str, str]:
    """(css, the report page's script, its CSP)."""
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    return (css, *page_script("report.js"))


def _forest(comp: Comparison, min_effect: float | None) -> Markup:
    rows = [
        ForestRow(label=m.metric, estimate=m.diff.estimate, low=m.diff.low, high=m.diff.high, significant=m.significant)
        for m in comp.metrics
    ]
    return forest_plot(rows, min_effect=min_effect, title=f"{comp.treatment} vs {comp.control}: Δ with CI per metric")


def _saturation_chart(name: str, saturation: Mapping[str, Any] | None) -> Markup | None:
    points = [p for p in (saturation or {}).get("points") or [] if isinstance(p, Mapping)]
    if len(points) < 2:
        return None
    series = Series(
        name=f"{name}: CI width", points=[(f"{p.get('repeats')} repeats", p.get("ci_width")) for p in points]
    )
    return line_chart([series], title=f"CI width over repeats ({name})", y_label="CI width", x_label="repeats")


def render_html(report: Report, *, title: str | None = None, detail_rows: int = DETAIL_ROWS) -> str:
    """The whole page for a stored report, with the detail of at most ``detail_rows`` sample rows
    (the page says how many of how many are shown)."""
    view = ReportView(report)
    data = payload(view, limit=detail_rows)
    css, js, csp = assets()
    min_effect = view.stats_config.get("min_effect")
    comparisons = [
        (
            c,
            _forest(c, min_effect if isinstance(min_effect, int | float) else None),
            _saturation_chart(f"{c.treatment} vs {c.control}", c.saturation),
        )
        for c in view.comparisons
    ]
    saturation = [(v.name, _saturation_chart(v.name, v.saturation)) for v in view.variants]
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            title=title or f"knowmeter report {view.run_id}",
            view=view,
            css=Markup(css),
            js=Markup(js),
            csp=csp,
            comparisons=comparisons,
            plain=[] if view.comprehension else plain_summary(view),
            saturation=saturation,
            budget=budget_rows(view.budget),
            compared=data["control"] is not None and len(data["variants"]) > 1,
            shown=data["shown"],
            traced=data["traced"],
            inventory=inventories(view.gaps, data["rows"]),
            inventory_cap=INVENTORY_ROWS,
            total=data["total"],
            data=Markup(script_json(data)),
        )
    )
