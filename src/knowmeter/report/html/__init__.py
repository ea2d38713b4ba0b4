"""The self-contained HTML report: one file, inline CSS, inline SVG, a little vanilla JS, no
network. Rendered from stored ``report.json`` content through :class:`~knowmeter.report._view.ReportView`."""

from knowmeter.report.html._page import render_html, write_html

__all__ = ["render_html", "write_html"]
