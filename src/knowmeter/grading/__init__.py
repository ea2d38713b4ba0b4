"""Grading: assertions (fact / behavior layers), the LLM judge (judge layer), layered scores.

``load_assertions`` validates a sample's assertions when the sample file is loaded; ``grade``
grades one task and returns a ``Grade`` (stored per task in results.jsonl via ``to_dict``).
The built-in assertion types (layer, summary, example) are listed once in
``knowmeter.grading._catalog`` (``BUILTIN_TYPES``); the layers and score formulas are documented
in ``knowmeter.grading._layers``.
"""

from knowmeter.grading._catalog import BUILTIN_TYPES, DEFAULT_LAYER, AssertionType
from knowmeter.grading._concurrency import gather
from knowmeter.grading._grade import grade
from knowmeter.grading._layers import (
    Layer,
    assertion_layer_score,
    composite_score,
    ratio_score,
)
from knowmeter.grading._model import (
    AssertionResult,
    DimensionOutcome,
    Grade,
    GradingConfig,
    JudgeOutcome,
    JudgeSpec,
    Layers,
)
from knowmeter.grading._prompts import (
    METRIC_TEMPLATES,
    judge_prompt_hash,
    judge_template,
    metric_prompt_hashes,
    tool_use_summary,
)
from knowmeter.grading._registry import (
    Assertion,
    ListAssertion,
    assertion_class,
    assertion_types,
    load_assertion,
    load_assertions,
)
from knowmeter.grading._reply import JudgeReply, JudgeReplyError, parse_judge_reply
from knowmeter.grading._similarity import RougeScore, bleu, levenshtein, rouge_n
from knowmeter.grading._unicode import char_length, graphemes, word_tokens

__all__ = [
    "BUILTIN_TYPES",
    "DEFAULT_LAYER",
    "METRIC_TEMPLATES",
    "Assertion",
    "AssertionResult",
    "AssertionType",
    "DimensionOutcome",
    "Grade",
    "GradingConfig",
    "JudgeOutcome",
    "JudgeReply",
    "JudgeReplyError",
    "JudgeSpec",
    "Layer",
    "Layers",
    "ListAssertion",
    "RougeScore",
    "assertion_class",
    "assertion_layer_score",
    "assertion_types",
    "bleu",
    "char_length",
    "composite_score",
    "gather",
    "grade",
    "graphemes",
    "judge_prompt_hash",
    "judge_template",
    "levenshtein",
    "load_assertion",
    "load_assertions",
    "metric_prompt_hashes",
    "parse_judge_reply",
    "ratio_score",
    "rouge_n",
    "tool_use_summary",
    "word_tokens",
]
