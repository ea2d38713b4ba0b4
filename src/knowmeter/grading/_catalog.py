"""The built-in assertion types, listed once: each type's name, the module that defines it, the
layer it scores in, what it checks (one line) and an example as a sample file writes it.

Grading reads the layers (``DEFAULT_LAYER``) and the modules to import on first use
(``BUILTIN_MODULES``); ``knowmeter docs`` / ``docs/reference.md`` read the summaries and examples.
The classes themselves register under the same names with ``@register`` (a test keeps the two in
step). Why a type scores in its layer is said in ``knowmeter.grading._layers``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knowmeter.grading._layers import Layer


@dataclass(frozen=True, slots=True)
class AssertionType:
    """One built-in assertion type. ``layer`` None: ``assert-set``, which takes its members'."""

    name: str
    #: the module under ``knowmeter.grading`` whose ``@register(name)`` defines the class
    module: str
    layer: Layer | None
    #: what the type checks, one line (lower-case start, no full stop)
    summary: str
    #: the example's keys besides ``type``
    keys: Mapping[str, Any]

    @property
    def example(self) -> dict[str, Any]:
        """The example, as written under a sample's ``assertions:``."""
        return {"type": self.name, **self.keys}


def _types(module: str, layer: Layer | None, *rows: tuple[str, str, dict[str, Any]]) -> tuple[AssertionType, ...]:
    return tuple(AssertionType(name, module, layer, summary, keys) for name, summary, keys in rows)


BUILTIN_TYPES: tuple[AssertionType, ...] = (
    #: what the answer says, its length and its format (they constrain the answer itself)
    *_types(
        "_checks_text",
        Layer.FACT,
        ("contains", "the answer contains `value`", {"value": "30 days"}),
        ("not_contains", "the answer does not contain `value`", {"value": "I'm not sure", "weight": 0.5}),
        ("icontains", "the answer contains `value`, ignoring case", {"value": "refund"}),
        ("contains_all", "the answer contains every value", {"values": ["30 days", "original payment method"]}),
        (
            "contains_any",
            "the answer contains at least one value",
            {"values": ["refund", "reimburse"], "ignore_case": True},
        ),
        ("regex", "the regular expression matches the answer", {"pattern": r"\b\d+ business days\b", "flags": "i"}),
        ("starts_with", "the answer starts with `value`", {"value": "Yes"}),
        ("ends_with", "the answer ends with `value`", {"value": "."}),
        ("equals", "the answer is exactly `value` (trimmed)", {"value": "42"}),
        ("not_equals", "the answer is not `value`", {"value": "N/A"}),
        ("min_length", "at least `value` characters", {"value": 20}),
        ("max_length", "at most `value` characters", {"value": 800}),
        ("word_count_min", "at least `value` words", {"value": 5}),
        ("word_count_max", "at most `value` words", {"value": 120}),
        ("json_valid", "the answer is valid JSON", {}),
        (
            "json_schema",
            "the answer is JSON valid against `schema`",
            {"schema": {"type": "object", "required": ["plan"]}},
        ),
    ),
    #: closeness to a reference answer
    *_types(
        "_checks_similarity",
        Layer.FACT,
        (
            "rouge_n_min",
            "ROUGE-N against `reference` is at least `value`",
            {"reference": "Refunds are possible within 30 days.", "value": 0.4},
        ),
        (
            "bleu_min",
            "BLEU against `reference` is at least `value`",
            {"reference": "Refunds are possible within 30 days.", "value": 0.2},
        ),
        ("levenshtein_max", "edit distance to `reference` is at most `value`", {"reference": "ERR_QUOTA", "value": 2}),
    ),
    #: how the agent got there: the tools it called and with what, its turns, cost and time
    *_types(
        "_checks_trace",
        Layer.BEHAVIOR,
        ("tools_called", "every listed tool was called", {"values": ["Read", "Grep"]}),
        ("tools_not_called", "none of the listed tools was called", {"value": "Bash"}),
        ("tools_count_min", "at least `value` tool calls (of `tool`, when given)", {"value": 1, "tool": "Read"}),
        ("tools_count_max", "at most `value` tool calls (of `tool`, when given)", {"value": 4}),
        (
            "tool_input_contains",
            "some call's input (of `tool`) contains `value`",
            {"tool": "Read", "value": "knowledge/refunds.md"},
        ),
        (
            "tool_input_not_contains",
            "no call's input (of `tool`) contains `value`",
            {"tool": "Bash", "value": "rm -rf"},
        ),
        (
            "tool_output_contains",
            "some call's output (of `tool`) contains `value`",
            {"tool": "Grep", "value": "refunds.md"},
        ),
        ("turns_min", "at least `value` turns", {"value": 1}),
        ("turns_max", "at most `value` turns", {"value": 6}),
        ("cost_max", "the task cost at most `value` USD (unknown cost fails)", {"value": 0.05}),
        ("latency_max", "the task took at most `value` ms", {"value": 60000}),
    ),
    #: judge-backed content metrics (not evaluated without a judge)
    *_types(
        "_checks_judge",
        Layer.FACT,
        (
            "semantic_similarity",
            "a judge scores the answer's agreement with `reference` ≥ `threshold` (1–5)",
            {"reference": "Refunds within 30 days.", "threshold": 4},
        ),
        (
            "faithfulness",
            "a judge scores the answer's faithfulness to the sample's context ≥ `threshold`",
            {"threshold": 3},
        ),
        ("answer_relevancy", "a judge scores the answer's relevance to the question ≥ `threshold`", {}),
        (
            "context_recall",
            "a judge scores how many key facts of `reference` the answer states ≥ `threshold`",
            {"reference": "30 days; original payment method"},
        ),
    ),
    #: your own check; ``layer: behavior`` on the assertion moves it
    *_types(
        "_checks_custom",
        Layer.FACT,
        (
            "custom",
            "your Python function `fn: file.py:function(output, sample, trace)` returns a bool or `{pass, reason}`",
            {"fn": "checks.py:has_refund_window", "timeout": 10},
        ),
    ),
    #: a group: scores in its members' layer (a set mixing layers must say ``layer:``)
    *_types(
        "_checks_set",
        None,
        (
            "assert-set",
            "a group of assertions that passes when `all` / `any` of them pass (counted once)",
            {
                "mode": "any",
                "assertions": [{"type": "icontains", "value": "refund"}, {"type": "icontains", "value": "money back"}],
            },
        ),
    ),
)

#: Every built-in type by name.
TYPES: Mapping[str, AssertionType] = {t.name: t for t in BUILTIN_TYPES}
#: The module defining each built-in type: it is imported when a sample first uses the type, so a
#: run loads only the checks it needs.
BUILTIN_MODULES: Mapping[str, str] = {t.name: t.module for t in BUILTIN_TYPES}
#: The default layer of every assertion type (``assert-set`` takes its members' layer).
DEFAULT_LAYER: Mapping[str, Layer] = {t.name: t.layer for t in BUILTIN_TYPES if t.layer is not None}
