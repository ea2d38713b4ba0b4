"""Reports: report.json as one typed model (``Report``, versioned, with a generated JSON
Schema), the terminal summary."""

from knowmeter.gates import Gates
from knowmeter.report._build import build_report, write_report
from knowmeter.report._compare_section import compare_config, comparison_section, observations
from knowmeter.report._cost_text import known_cost_text
from knowmeter.report._decision import OUTCOMES, Blocker, BlockerKind, Decision, Incompleteness, Outcome, incompleteness
from knowmeter.report._fold import Ordered, Section, SectionBuilder, TaskKey
from knowmeter.report._gaps_section import gaps_section, variant_root
from knowmeter.report._index import index_rows, not_comparable, open_run_index
from knowmeter.report._model import (
    REPORT_SCHEMA_VERSION,
    ComprehensionArm,
    ComprehensionSection,
    ComprehensionVerdict,
    CoverageSection,
    ExecutorInfo,
    GapsSection,
    GraderInfo,
    ProbeComparison,
    ProbeSide,
    ProbeVariantRow,
    Report,
    RunInfo,
    Statistics,
    VariantOperations,
)
from knowmeter.report._outputs import write_outputs, write_text
from knowmeter.report._overrides import NO_OVERRIDES, ReportOverrides, given
from knowmeter.report._read import joined_report, read_report
from knowmeter.report._resources_section import resources_section
from knowmeter.report._terminal import percent, probe_lines, render_terminal
from knowmeter.report._view import ReportView, SampleRow, TaskView
from knowmeter.store import BudgetStatus  # run.json's budget block, as report.json shows it

__all__ = [
    "NO_OVERRIDES",
    "OUTCOMES",
    "REPORT_SCHEMA_VERSION",
    "Blocker",
    "BlockerKind",
    "BudgetStatus",
    "ComprehensionArm",
    "ComprehensionSection",
    "ComprehensionVerdict",
    "CoverageSection",
    "Decision",
    "ExecutorInfo",
    "GapsSection",
    "Gates",
    "GraderInfo",
    "Incompleteness",
    "Ordered",
    "Outcome",
    "ProbeComparison",
    "ProbeSide",
    "ProbeVariantRow",
    "Report",
    "ReportOverrides",
    "ReportView",
    "RunInfo",
    "SampleRow",
    "Section",
    "SectionBuilder",
    "Statistics",
    "TaskKey",
    "TaskView",
    "VariantOperations",
    "build_report",
    "compare_config",
    "comparison_section",
    "gaps_section",
    "given",
    "incompleteness",
    "index_rows",
    "joined_report",
    "known_cost_text",
    "not_comparable",
    "observations",
    "open_run_index",
    "percent",
    "probe_lines",
    "read_report",
    "render_terminal",
    "resources_section",
    "variant_root",
    "write_outputs",
    "write_report",
    "write_text",
]
