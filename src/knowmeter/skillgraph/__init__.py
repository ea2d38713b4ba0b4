"""Skill Graph files read unchanged: SKILL.md in its three shapes (v4 nested ``concept:``, v6
flat fields, v8 flat fields + ``audit-state.json``), the three eval-file formats mapped into one
typed case model, the rubric dimensions C1–C9, and ``truth_sources`` resolution.

Entry points: :func:`load_skill`, :func:`load_cases`, :func:`resolve_truth_source`; every reader
raises :class:`SkillFormatError` (a ``ValueError`` and an ``InputError``) with one line naming the
file, line, case id, field and the fix. See each private module's docstring for the mapping rules.
"""

from knowmeter.skillgraph._application import ApplicationKind, application_kind, application_text
from knowmeter.skillgraph._cases import (
    ROUTING_NOTE,
    ROUTING_SUFFIX,
    CaseFile,
    CaseFormat,
    ComprehensionCase,
    ExpectedBehavior,
    load_cases,
)
from knowmeter.skillgraph._dimension import (
    CONCEPT_FIELDS,
    DO_NOT_USE_SECTION,
    LEGACY_DIMENSIONS,
    METADATA_VALUES,
    VERIFICATION_SECTION,
    BehaviorKind,
    ConceptField,
    Dimension,
    Transfer,
)
from knowmeter.skillgraph._errors import SkillFormatError
from knowmeter.skillgraph._finding import RULES, Finding, Severity
from knowmeter.skillgraph._lint import LintResult, lint_paths
from knowmeter.skillgraph._lint_cases import lint_cases
from knowmeter.skillgraph._lint_skill import lint_skill
from knowmeter.skillgraph._locate import eval_folders, find_case_files, find_skill_file
from knowmeter.skillgraph._markdown import Section, slugs
from knowmeter.skillgraph._paths import find_repo_root
from knowmeter.skillgraph._schema import (
    SchemaProblem,
    frontmatter_problems,
    schema_version_number,
    sidecar_problems,
    versioned_frontmatter_problems,
)
from knowmeter.skillgraph._skill import (
    UNDERSTANDING_FIELDS,
    ConceptText,
    Shape,
    Skill,
    load_skill,
    read_audit_state,
)
from knowmeter.skillgraph._truth import ResolvedTruthSource, TruthSource, resolve_truth_source
from knowmeter.skillgraph._verbatim import (
    STOPWORDS,
    Overlap,
    SourceGrams,
    source_grams,
    tokens,
    verbatim_overlap,
)

__all__ = [
    "ANCHORS_SUFFIX",
    "CONCEPT_FIELDS",
    "DO_NOT_USE_SECTION",
    "LEGACY_DIMENSIONS",
    "METADATA_VALUES",
    "ROUTING_NOTE",
    "ROUTING_SUFFIX",
    "RULES",
    "STOPWORDS",
    "UNDERSTANDING_FIELDS",
    "VERIFICATION_SECTION",
    "ApplicationKind",
    "BehaviorKind",
    "CaseFile",
    "CaseFormat",
    "ComprehensionCase",
    "ConceptField",
    "ConceptText",
    "Dimension",
    "ExpectedBehavior",
    "Finding",
    "LintResult",
    "Overlap",
    "ResolvedTruthSource",
    "SchemaProblem",
    "Section",
    "Severity",
    "Shape",
    "Skill",
    "SkillFormatError",
    "SourceGrams",
    "Transfer",
    "TruthSource",
    "application_kind",
    "application_text",
    "eval_folders",
    "find_case_files",
    "find_repo_root",
    "find_skill_file",
    "frontmatter_problems",
    "lint_cases",
    "lint_paths",
    "lint_skill",
    "load_cases",
    "load_skill",
    "read_audit_state",
    "resolve_truth_source",
    "schema_version_number",
    "sidecar_problems",
    "slugs",
    "source_grams",
    "tokens",
    "verbatim_overlap",
    "versioned_frontmatter_problems",
]
