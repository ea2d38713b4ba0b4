"""Reports: report.json as one typed model (``Report``, versioned, with a generated JSON
Schema), the terminal summary."""

from knowmeter.report._build import SectionBuilder, build_report
from knowmeter.report._model import (
    REPORT_SCHEMA_VERSION,
    BudgetStatus,
    ComprehensionSection,
    ComprehensionVerdict,
    CoverageSection,
    ExecutorInfo,
    GapsSection,
    Gates,
    ProbeComparison,
    Report,
    RunInfo,
    Statistics,
    VariantOperations,
)
from knowmeter.report._summary import summarize_operations

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "BudgetStatus",
    "ComprehensionSection",
    "ComprehensionVerdict",
    "CoverageSection",
    "ExecutorInfo",
    "GapsSection",
    "Gates",
    "ProbeComparison",
    "Report",
    "RunInfo",
    "SectionBuilder",
    "Statistics",
    "VariantOperations",
    "build_report",
    "summarize_operations",
]
