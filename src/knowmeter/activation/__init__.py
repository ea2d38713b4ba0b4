"""Skill activation: does the agent load the skill when it should, and only then?

``load_activation_cases`` (plain YAML/JSON, Skill Graph SKILL.md examples / anti_examples,
Skill Graph ``*.routing.json``, skill-creator trigger evals) → ``prepare_activation`` (tasks on
the ordinary runner, each with only its case's skills installed) → ``detect_activations`` (the
whole trace: Skill tool calls and SKILL.md reads) → ``arm_figures`` (recall, false-activation
rate, precision, F1, routing top-1, clustered by case) → ``compare_arms`` / ``verdict`` (A/B of
two versions or descriptions) → ``activation_report`` (``activation.json``).
"""

from knowmeter.activation._cases import ActivationCase, CaseFile, load_activation_cases
from knowmeter.activation._compare import MIN_CASES, compare_arms, split_cases, verdict
from knowmeter.activation._detect import COUNTS, Counts, Detection, detect_activations
from knowmeter.activation._html import html_report, runs_index_html
from knowmeter.activation._main import ActivationInterrupted, activation_store, resume_activation, run_activation
from knowmeter.activation._model import (
    SCHEMA_VERSION,
    ActivationReport,
    ArmFigures,
    Comparison,
    ConfusedCase,
    PairedChange,
    Rate,
)
from knowmeter.activation._outputs import junit_xml, markdown_summary, write_ci_outputs
from knowmeter.activation._report import ACTIVATION_FILE, activation_report
from knowmeter.activation._run import (
    CONTROL,
    SKILL_EXECUTORS,
    TREATMENT,
    ActivationPlan,
    Target,
    prepare_activation,
    with_description,
)
from knowmeter.activation._stats import Trial, arm_figures, clustered_rate
from knowmeter.activation._terminal import summary_lines
from knowmeter.activation._trends import TrendPoint, activation_trends, trend_lines

__all__ = [
    "ACTIVATION_FILE",
    "CONTROL",
    "COUNTS",
    "MIN_CASES",
    "SCHEMA_VERSION",
    "SKILL_EXECUTORS",
    "TREATMENT",
    "ActivationCase",
    "ActivationInterrupted",
    "ActivationPlan",
    "ActivationReport",
    "ArmFigures",
    "CaseFile",
    "Comparison",
    "ConfusedCase",
    "Counts",
    "Detection",
    "PairedChange",
    "Rate",
    "Target",
    "TrendPoint",
    "Trial",
    "activation_report",
    "activation_store",
    "activation_trends",
    "arm_figures",
    "clustered_rate",
    "compare_arms",
    "detect_activations",
    "html_report",
    "junit_xml",
    "load_activation_cases",
    "markdown_summary",
    "prepare_activation",
    "resume_activation",
    "run_activation",
    "runs_index_html",
    "split_cases",
    "summary_lines",
    "trend_lines",
    "verdict",
    "with_description",
    "write_ci_outputs",
]
