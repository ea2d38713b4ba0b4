"""The self-contained HTML report: one file, inline CSS, inline SVG, a little vanilla JS, no
network. Rendered from stored ``report.json`` content through :class:`~knowmeter.report._view.ReportView`."""

from knowmeter.report.html._health import render_health_html
from knowmeter.report.html._page import assets, environment, id_key, page_script, render_html
from knowmeter.report.html._payload import detail_row, row_rank, variant_order
from knowmeter.report.html._svg import Series, line_chart

__all__ = [
    "Series",
    "assets",
    "detail_row",
    "environment",
    "id_key",
    "line_chart",
    "page_script",
    "render_health_html",
    "render_html",
    "row_rank",
    "variant_order",
]
