"""Skill comprehension: does an agent *understand* a skill (research rubric C1–C9), measured as
the paired difference between answering without the skill and with it.

Pipeline: ``load_inputs`` (SKILL.md + eval file via ``knowmeter.skillgraph``) →
``prepare_comprehension`` (two arms on the ordinary runner) → ``make_grader`` (per answer: the
A.3 verbatim check, the Appendix A grader prompt, the RULE-1/2/6/9 reply checks with one re-ask,
verdicts computed in code) → ``comprehension_section`` (statistics and the skill's verdict in
report.json) → ``write_state`` (opt-in audit-state.json update).

Importing this package registers the ``scripted-grader`` executor (deterministic, non-LLM).
"""

from knowmeter.comprehension import _scripted as _scripted  # registers the scripted-grader executor
from knowmeter.comprehension._calibrate import (
    Anchor,
    AnchorResult,
    calibration_flag,
    calibration_summary,
    default_anchor_file,
    load_anchors,
    run_calibration,
)
from knowmeter.comprehension._case import GraderCase, make_case
from knowmeter.comprehension._criteria import RUBRIC_CRITERIA, VERBATIM_BEHAVIOR, Behavior, case_behaviors
from knowmeter.comprehension._grade import grade_answer
from knowmeter.comprehension._inputs import Inputs, load_inputs
from knowmeter.comprehension._prompt import GRADER_TEMPLATE, reask_prompt, render_grader_prompt
from knowmeter.comprehension._reply import (
    FAIL_HEDGES,
    PASS_REVIEW_HEDGES,
    BehaviorVerdict,
    GraderReplyError,
    GraderVerdict,
    hedge_words,
    parse_grader_reply,
)
from knowmeter.comprehension._run import (
    BASELINE_ARM,
    GRADER_KIND,
    SKILL_ARM,
    ComprehensionPlan,
    Target,
    make_config,
    make_grader,
    prepare_comprehension,
    reprepare,
    start_comprehension,
)
from knowmeter.comprehension._scripted import ScriptedGrader, scripted_reply
from knowmeter.comprehension._section import comprehension_section
from knowmeter.comprehension._state import OWNED_FIELDS, grader_model, state_update, write_state
from knowmeter.comprehension._state_frontmatter import (
    frontmatter_fields,
    frontmatter_refusal,
    frontmatter_update,
    write_frontmatter_state,
)
from knowmeter.comprehension._stats import Graded, StatsConfig, comprehension_stats, graded_rows
from knowmeter.comprehension._terminal import summary_lines
from knowmeter.comprehension._verdict import LEVELS, Parties, model_family, skill_verdict
from knowmeter.skillgraph import STOPWORDS, Overlap, SourceGrams, tokens, verbatim_overlap

__all__ = [
    "BASELINE_ARM",
    "FAIL_HEDGES",
    "GRADER_KIND",
    "GRADER_TEMPLATE",
    "LEVELS",
    "OWNED_FIELDS",
    "PASS_REVIEW_HEDGES",
    "RUBRIC_CRITERIA",
    "SKILL_ARM",
    "STOPWORDS",
    "VERBATIM_BEHAVIOR",
    "Anchor",
    "AnchorResult",
    "Behavior",
    "BehaviorVerdict",
    "ComprehensionPlan",
    "Graded",
    "GraderCase",
    "GraderReplyError",
    "GraderVerdict",
    "Inputs",
    "Overlap",
    "Parties",
    "ScriptedGrader",
    "SourceGrams",
    "StatsConfig",
    "Target",
    "calibration_flag",
    "calibration_summary",
    "case_behaviors",
    "comprehension_section",
    "comprehension_stats",
    "default_anchor_file",
    "frontmatter_fields",
    "frontmatter_refusal",
    "frontmatter_update",
    "grade_answer",
    "graded_rows",
    "grader_model",
    "hedge_words",
    "load_anchors",
    "load_inputs",
    "make_case",
    "make_config",
    "make_grader",
    "model_family",
    "parse_grader_reply",
    "prepare_comprehension",
    "reask_prompt",
    "render_grader_prompt",
    "reprepare",
    "run_calibration",
    "scripted_reply",
    "skill_verdict",
    "start_comprehension",
    "state_update",
    "summary_lines",
    "tokens",
    "verbatim_overlap",
    "write_frontmatter_state",
    "write_state",
]
