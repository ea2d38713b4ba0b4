"""The reference for what users write and what knowmeter's agents must answer, generated from the
code so it cannot drift: assertion types (keys from the registered models, layers from
``DEFAULT_LAYER``, one example each — a test loads every example), the script protocol (its
example reply is parsed by the real parser in a test), the judge reply envelope, and the response
cache (its key fields read from ``cache_key``'s signature).

``knowmeter docs [TOPIC]`` prints it; ``docs/reference.md`` is ``render()`` (a test keeps it in
step; regenerate with ``python -m knowmeter.reference > docs/reference.md``).
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import yaml

from knowmeter import defaults

#: One example per assertion type, as it is written in a sample file.
EXAMPLES: dict[str, dict[str, Any]] = {
    "contains": {"type": "contains", "value": "30 days"},
    "not_contains": {"type": "not_contains", "value": "I'm not sure", "weight": 0.5},
    "icontains": {"type": "icontains", "value": "refund"},
    "contains_all": {"type": "contains_all", "values": ["30 days", "original payment method"]},
    "contains_any": {"type": "contains_any", "values": ["refund", "reimburse"], "ignore_case": True},
    "regex": {"type": "regex", "pattern": r"\b\d+ business days\b", "flags": "i"},
    "starts_with": {"type": "starts_with", "value": "Yes"},
    "ends_with": {"type": "ends_with", "value": "."},
    "equals": {"type": "equals", "value": "42"},
    "not_equals": {"type": "not_equals", "value": "N/A"},
    "min_length": {"type": "min_length", "value": 20},
    "max_length": {"type": "max_length", "value": 800},
    "word_count_min": {"type": "word_count_min", "value": 5},
    "word_count_max": {"type": "word_count_max", "value": 120},
    "json_valid": {"type": "json_valid"},
    "json_schema": {"type": "json_schema", "schema": {"type": "object", "required": ["plan"]}},
    "rouge_n_min": {"type": "rouge_n_min", "reference": "Refunds are possible within 30 days.", "value": 0.4},
    "bleu_min": {"type": "bleu_min", "reference": "Refunds are possible within 30 days.", "value": 0.2},
    "levenshtein_max": {"type": "levenshtein_max", "reference": "ERR_QUOTA", "value": 2},
    "tools_called": {"type": "tools_called", "values": ["Read", "Grep"]},
    "tools_not_called": {"type": "tools_not_called", "value": "Bash"},
    "tools_count_min": {"type": "tools_count_min", "value": 1, "tool": "Read"},
    "tools_count_max": {"type": "tools_count_max", "value": 4},
    "tool_input_contains": {"type": "tool_input_contains", "tool": "Read", "value": "knowledge/refunds.md"},
    "tool_input_not_contains": {"type": "tool_input_not_contains", "tool": "Bash", "value": "rm -rf"},
    "tool_output_contains": {"type": "tool_output_contains", "tool": "Grep", "value": "refunds.md"},
    "turns_min": {"type": "turns_min", "value": 1},
    "turns_max": {"type": "turns_max", "value": 6},
    "cost_max": {"type": "cost_max", "value": 0.05},
    "latency_max": {"type": "latency_max", "value": 60000},
    "semantic_similarity": {"type": "semantic_similarity", "reference": "Refunds within 30 days.", "threshold": 4},
    "faithfulness": {"type": "faithfulness", "threshold": 3},
    "answer_relevancy": {"type": "answer_relevancy"},
    "context_recall": {"type": "context_recall", "reference": "30 days; original payment method"},
    "custom": {"type": "custom", "fn": "checks.py:has_refund_window", "timeout": 10},
    "assert-set": {"type": "assert-set", "mode": "any", "assertions": [
        {"type": "icontains", "value": "refund"}, {"type": "icontains", "value": "money back"}]},
}

#: What each assertion type checks (one line).
SUMMARIES: dict[str, str] = {
    "contains": "the answer contains `value`", "not_contains": "the answer does not contain `value`",
    "icontains": "the answer contains `value`, ignoring case", "contains_all": "the answer contains every value",
    "contains_any": "the answer contains at least one value", "regex": "the regular expression matches the answer",
    "starts_with": "the answer starts with `value`", "ends_with": "the answer ends with `value`",
    "equals": "the answer is exactly `value` (trimmed)", "not_equals": "the answer is not `value`",
    "min_length": "at least `value` characters", "max_length": "at most `value` characters",
    "word_count_min": "at least `value` words", "word_count_max": "at most `value` words",
    "json_valid": "the answer is valid JSON", "json_schema": "the answer is JSON valid against `schema`",
    "rouge_n_min": "ROUGE-N against `reference` is at least `value`",
    "bleu_min": "BLEU against `reference` is at least `value`",
    "levenshtein_max": "edit distance to `reference` is at most `value`",
    "tools_called": "every listed tool was called", "tools_not_called": "none of the listed tools was called",
    "tools_count_min": "at least `value` tool calls (of `tool`, when given)",
    "tools_count_max": "at most `value` tool calls (of `tool`, when given)",
    "tool_input_contains": "some call's input (of `tool`) contains `value`",
    "tool_input_not_contains": "no call's input (of `tool`) contains `value`",
    "tool_output_contains": "some call's output (of `tool`) contains `value`",
    "turns_min": "at least `value` turns", "turns_max": "at most `value` turns",
    "cost_max": "the task cost at most `value` USD (unknown cost fails)",
    "latency_max": "the task took at most `value` ms",
    "semantic_similarity": "a judge scores the answer's agreement with `reference` ≥ `threshold` (1–5)",
    "faithfulness": "a judge scores the answer's faithfulness to the sample's context ≥ `threshold`",
    "answer_relevancy": "a judge scores the answer's relevance to the question ≥ `threshold`",
    "context_recall": "a judge scores how many key facts of `reference` the answer states ≥ `threshold`",
    "custom": "your Python function `fn: file.py:function(output, sample, trace)` returns a bool or "
              "`{pass, reason}`",
    "assert-set": "a group of assertions that passes when `all` / `any` of them pass (counted once)",
}

#: A script agent's reply, as the parser reads it (a test runs it through ``parse_script_stdout``).
SCRIPT_REPLY: dict[str, Any] = {
    "output": "Refunds are possible within 30 days of purchase.",
    "inputTokens": 812, "outputTokens": 64, "costUSD": 0.0021, "durationApiMs": 930, "numTurns": 2,
    "turns": [
        {"role": "assistant", "content": "Let me check the refund policy.",
         "toolCalls": [{"tool": "Grep", "id": "c1", "input": {"pattern": "refund"},
                        "output": "knowledge/refunds.md", "success": True}]},
        {"role": "assistant", "content": "Refunds are possible within 30 days of purchase.",
         "toolCalls": [{"tool": "Read", "input": {"file_path": "knowledge/refunds.md"},
                        "output": "Refunds: within 30 days.", "status": "success"}]},
    ],
}

#: What a judge must reply (inside a script judge's ``output``); a test parses it.
JUDGE_REPLY: dict[str, Any] = {"reasoning": "States the 30-day window; omits the payout time.", "score": 4,
                               "reason": "meets the rubric with a minor gap"}

TOPICS = ("assertions", "script", "judge", "cache")


def _type_of(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        target = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
        return _type_of(target, defs) if "enum" in target else "assertion"
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if "anyOf" in schema:
        parts = [_type_of(s, defs) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(dict.fromkeys(parts))
    kind = schema.get("type")
    if kind == "array":
        return f"list of {_type_of(schema.get('items') or {}, defs)}"
    return {"string": "text", "number": "number", "integer": "whole number", "boolean": "true/false",
            "object": "mapping"}.get(str(kind), "any")


def _keys(cls: Any) -> list[str]:
    """One line per key of an assertion type: name, aliases, type, required or default."""
    from pydantic_core import PydanticUndefined

    from knowmeter.grading import ListAssertion

    schema_all = cls.model_json_schema(by_alias=True)
    props, defs = schema_all.get("properties", {}), schema_all.get("$defs", {})
    lines = []
    for name, f in cls.model_fields.items():
        if name in ("type", "weight", "negate", "description"):
            continue
        key = f.alias or name
        choices = getattr(f.validation_alias, "choices", None) or []
        others = [c for c in choices if c != key]
        if key == "values" and issubclass(cls, ListAssertion):
            others.append("value")
        alias = f" (or `{'`, `'.join(others)}`)" if others else ""
        schema: dict[str, Any] = props.get(key) or next((props[c] for c in choices if c in props), {})
        need = "required" if f.is_required() else (
            f"default {json.dumps(f.default)}" if f.default is not PydanticUndefined and f.default is not None
            else "optional")
        lines.append(f"  - `{key}`{alias}: {_type_of(schema, defs)}, {need}")
    return lines


def assertions_reference() -> str:
    """Every registered assertion type: layer, what it checks, keys, an example."""
    from knowmeter.grading import assertion_class, assertion_types

    out = ["## Assertion types", "",
           "Written under a sample's `assertions:`. Every type also takes `weight` (default 1; 0 = reported, "
           "not scored), `not: true` (inverts the result) and `description`. Unknown keys are rejected when the "
           "sample file is loaded. Layer: which layer score the assertion counts in (`custom` and `assert-set` "
           "take `layer:`).", ""]
    for name, layer in assertion_types().items():
        cls = assertion_class(name)
        example = yaml.safe_dump([EXAMPLES[name]], sort_keys=False, allow_unicode=True, width=1000).rstrip()
        where = f"{layer.value} layer" if layer else "each member in its own layer"
        summary = SUMMARIES[name][0].upper() + SUMMARIES[name][1:] + "."
        out += [f"### `{name}` — {where}", "", summary, "", *(_keys(cls) or ["  - no keys of its own"]), "",
                "```yaml", example, "```", ""]
    return "\n".join(out)


def script_reference() -> str:
    """The script executor's protocol, with a reply the parser reads."""
    reply = json.dumps(SCRIPT_REPLY, indent=2, ensure_ascii=False)
    return "\n".join([
        "## The script protocol (`--executor 'python my_agent.py'`)", "",
        "The command runs once per task in the task's workspace. It reads one JSON object on stdin, "
        "`{\"model\", \"system\", \"prompt\"}` (`system` is the variant's artifact text, null for the baseline), "
        "and prints one JSON object on stdout. Only `output` is needed; the rest is recorded when given "
        "(a missing cost is *unknown*, never 0). A non-zero exit is an error carrying the last line of stderr. "
        "`turns` (each with `role`, `content` and its `toolCalls`) or a "
        "flat `toolCalls` list become the trace that behavior assertions, gap signals and coverage read. A "
        "tool call is `{tool, input, id?, output?, success? | is_error? | status?, exitCode?}` (`status`: "
        "success / failure / unknown). `ok: false` or `error` marks the task failed (not graded). stdout that "
        "is not JSON is graded as plain text; stdout that starts with `{` but does not parse is graded as text "
        "with a warning.", "",
        "```json", reply, "```", ""])


def judge_reference() -> str:
    """What a judge must answer."""
    inner = json.dumps(JUDGE_REPLY, ensure_ascii=False)
    envelope = json.dumps({"output": inner, "costUSD": 0.0004}, ensure_ascii=False)
    return "\n".join([
        "## Judge replies (`--judge executor:model`)", "",
        "A judge is asked with a versioned, hashed prompt and must reply with one JSON object "
        "`{reasoning, score, reason}`, `score` an integer 1–5 (prose or code fences around it are tolerated; "
        "the first object with a `score` is used). A judge that is a script (`--judge 'python my_judge.py:m'`) "
        "speaks the script protocol, so that object goes *inside* `output`, as a string:", "",
        "```json", envelope, "```", "",
        "A reply without a valid score is retried once, then the judge counts as failed for that task. A judge "
        "configured for a run that never produces a score makes the run's outcome JUDGE FAILED (exit 1); samples "
        "without a `rubric` (or `dimensions`) are not judged, which the summary says.", ""])


def cache_reference() -> str:
    """The response cache: where, what the key holds, how to bypass it."""
    from knowmeter.runner import BLOB_MIN_CHARS, CACHE_FILE, cache_key

    fields = ", ".join(f"`{p}`" for p in inspect.signature(cache_key).parameters)
    return "\n".join([
        "## The response cache", "",
        f"Successful agent answers are stored in `<output-dir>/{CACHE_FILE}` (default `{defaults.OUTPUT_DIR}/`) "
        "and "
        f"served again when every part of the key is the same: {fields}. Errors are never cached; the repeat "
        "index is in the key, so repeats are real replicates, and the variant name is too, so the two arms of "
        "an A/A test are independent. The summary says how many answers of each variant came from the cache "
        "(`… from the response cache`); a cached answer costs nothing in this run. `--no-cache` (or "
        "`noCache: true` in eval.yaml) neither reads nor writes it. A text of "
        f"{BLOB_MIN_CHARS // 1024} KiB or more in an answer (the output, the same text in its trace, a long "
        "tool output) is stored once, by its sha256, however many answers hold it.", ""])


_RENDER = {"assertions": assertions_reference, "script": script_reference, "judge": judge_reference,
           "cache": cache_reference}


def render(topic: str | None = None) -> str:
    """One topic's reference in Markdown, or all of them (``docs/reference.md``)."""
    if topic is not None:
        return _RENDER[topic]()
    head = ("# knowmeter reference\n\nGenerated from the code by `knowmeter docs` "
            "(`python -m knowmeter.reference > docs/reference.md`); a test keeps this file in step.\n")
    return "\n".join([head, *(_RENDER[t]() for t in TOPICS)])


if __name__ == "__main__":  # regenerate docs/reference.md
    print(render(), end="")
