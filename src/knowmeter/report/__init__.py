"""Reports: report.json (versioned, with a JSON Schema), the terminal summary."""

from knowmeter.report._build import REPORT_SCHEMA_VERSION, SectionBuilder, build_report
from knowmeter.report._summary import summarize_operations

__all__ = ["REPORT_SCHEMA_VERSION", "SectionBuilder", "build_report", "summarize_operations"]
