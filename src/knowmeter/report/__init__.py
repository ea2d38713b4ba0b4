"""Reports: report.json as one typed model (``Report``, versioned, with a generated JSON
Schema), the terminal summary."""

from knowmeter.report._build import SectionBuilder, build_report
from knowmeter.report._index import index_rows, open_run_index
from knowmeter.report._model import (
    REPORT_SCHEMA_VERSION,
    BudgetStatus,
    ComprehensionArm,
    ComprehensionSection,
    ComprehensionVerdict,
    CoverageSection,
    ExecutorInfo,
    GapsSection,
    Gates,
    ProbeComparison,
    ProbeSide,
    ProbeVariantRow,
    Report,
    RunInfo,
    Statistics,
    VariantOperations,
)
from knowmeter.report._read import read_report
from knowmeter.report._summary import summarize_operations

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "BudgetStatus",
    "ComprehensionArm",
    "ComprehensionSection",
    "ComprehensionVerdict",
    "CoverageSection",
    "ExecutorInfo",
    "GapsSection",
    "Gates",
    "ProbeComparison",
    "ProbeSide",
    "ProbeVariantRow",
    "Report",
    "RunInfo",
    "SectionBuilder",
    "Statistics",
    "VariantOperations",
    "build_report",
    "index_rows",
    "open_run_index",
    "read_report",
    "summarize_operations",
]
