"""The reference for what users write and what knowmeter's agents must answer, generated from the
code so it cannot drift: assertion types (keys from the registered models; layer, summary and
example from ``knowmeter.grading.BUILTIN_TYPES`` — a test loads every example), the script protocol (its
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

#: A script agent's reply, as the parser reads it (a test runs it through ``parse_script_stdout``).
SCRIPT_REPLY: dict[str, Any] = {
    "output": "Refunds are possible within 30 days of purchase.",
    "inputTokens": 812,
    "outputTokens": 64,
    "costUSD": 0.0021,
    "durationApiMs": 930,
    "numTurns": 2,
    "turns": [
        {
            "role": "assistant",
            "content": "Let me check the refund policy.",
            "toolCalls": [
                {
                    "tool": "Grep",
                    "id": "c1",
                    "input": {"pattern": "refund"},
                    "output": "knowledge/refunds.md",
                    "success": True,
                }
            ],
        },
        {
            "role": "assistant",
            "content": "Refunds are possible within 30 days of purchase.",
            "toolCalls": [
                {
                    "tool": "Read",
                    "input": {"file_path": "knowledge/refunds.md"},
                    "output": "Refunds: within 30 days.",
                    "status": "success",
                }
            ],
        },
    ],
}

#: What a judge must reply (inside a script judge's ``output``); a test parses it.
JUDGE_REPLY: dict[str, Any] = {
    "reasoning": "States the 30-day window; omits the payout time.",
    "score": 4,
    "reason": "meets the rubric with a minor gap",
}

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
    return {
        "string": "text",
        "number": "number",
        "integer": "whole number",
        "boolean": "true/false",
        "object": "mapping",
    }.get(str(kind), "any")


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
        need = (
            "required"
            if f.is_required()
            else (
                f"default {json.dumps(f.default)}"
                if f.default is not PydanticUndefined and f.default is not None
                else "optional"
            )
        )
        lines.append(f"  - `{key}`{alias}: {_type_of(schema, defs)}, {need}")
    return lines


def assertions_reference() -> str:
    """Every registered assertion type: layer, what it checks, keys, an example."""
    from knowmeter.grading import BUILTIN_TYPES, assertion_class

    out = [
        "## Assertion types",
        "",
        "Written under a sample's `assertions:`. Every type also takes `weight` (default 1; 0 = reported, "
        "not scored), `not: true` (inverts the result) and `description`. Unknown keys are rejected when the "
        "sample file is loaded. Layer: which layer score the assertion counts in (`custom` and `assert-set` "
        "take `layer:`).",
        "",
    ]
    for kind in sorted(BUILTIN_TYPES, key=lambda t: t.name):
        cls = assertion_class(kind.name)
        example = yaml.safe_dump([kind.example], sort_keys=False, allow_unicode=True, width=1000).rstrip()
        where = f"{kind.layer.value} layer" if kind.layer else "each member in its own layer"
        summary = kind.summary[0].upper() + kind.summary[1:] + "."
        out += [
            f"### `{kind.name}` — {where}",
            "",
            summary,
            "",
            *(_keys(cls) or ["  - no keys of its own"]),
            "",
            "```yaml",
            example,
            "```",
            "",
        ]
    return "\n".join(out)


def script_reference() -> str:
    """The script executor's protocol, with a reply the parser reads."""
    reply = json.dumps(SCRIPT_REPLY, indent=2, ensure_ascii=False)
    return "\n".join(
        [
            "## The script protocol (`--executor 'python my_agent.py'`)",
            "",
            "The command runs once per task in the task's workspace; its relative paths (`./agent.py`, the "
            "`agent.py` of `python agent.py`) name files in the folder it was given in — eval.yaml's for its "
            "`executor`, the shell's for `--executor` — not in the workspace. It reads one JSON object on stdin, "
            '`{"model", "system", "prompt"}` (`system` is the variant\'s artifact text, null for the baseline), '
            "and prints one JSON object on stdout. Only `output` is needed; the rest is recorded when given "
            "(a missing cost is *unknown*, never 0). A non-zero exit is an error carrying the last line of stderr. "
            "`turns` (each with `role`, `content` and its `toolCalls`) or a "
            "flat `toolCalls` list become the trace that behavior assertions, gap signals and coverage read. A "
            "tool call is `{tool, input, id?, output?, success? | is_error? | status?, exitCode?}` (`status`: "
            "success / failure / unknown). `ok: false` or `error` marks the task failed (not graded). stdout that "
            "is not JSON is graded as plain text; stdout that starts with `{` but does not parse is graded as text "
            "with a warning. A count (`inputTokens`, `outputTokens`, `numTurns`, `durationApiMs`) that is not a "
            "finite number >= 0, a `costUSD` that is not a number, and a missing or null `output` are unknown "
            "(an empty answer for `output`) with a warning; a NaN, infinite or negative `costUSD` fails the task.",
            "",
            "```json",
            reply,
            "```",
            "",
        ]
    )


def judge_reference() -> str:
    """What a judge must answer."""
    inner = json.dumps(JUDGE_REPLY, ensure_ascii=False)
    envelope = json.dumps({"output": inner, "costUSD": 0.0004}, ensure_ascii=False)
    return "\n".join(
        [
            "## Judge replies (`--judge executor:model`)",
            "",
            "A judge is asked with a versioned, hashed prompt and must reply with one JSON object "
            "`{reasoning, score, reason}`, `score` an integer 1–5 (prose or code fences around it are tolerated; "
            "the first object with a `score` is used). A judge that is a script (`--judge 'python my_judge.py:m'`) "
            "speaks the script protocol, so that object goes *inside* `output`, as a string:",
            "",
            "```json",
            envelope,
            "```",
            "",
            "A reply without a valid score is retried once, then the judge counts as failed for that task. A judge "
            "configured for a run that never produces a score makes the run's outcome JUDGE FAILED (exit 1); samples "
            "without a `rubric` (or `dimensions`) are not judged, which the summary says.",
            "",
        ]
    )


def cache_reference() -> str:
    """The response cache: where, what the key holds, how to bypass it."""
    from knowmeter.runner import BLOB_MIN_CHARS, CACHE_FILE, cache_key

    fields = ", ".join(f"`{p}`" for p in inspect.signature(cache_key).parameters)
    return "\n".join(
        [
            "## The response cache",
            "",
            f"Successful agent answers are stored in `<output-dir>/{CACHE_FILE}` (default `{defaults.OUTPUT_DIR}/`) "
            "and "
            f"served again when every part of the key is the same: {fields}. For a script agent `executor` holds "
            "its command and the content of every file the command names by path (its script; a file over "
            "32 MiB, such as an interpreter, by its size and modification time), so an edited agent is asked "
            "again, wherever it lies. Errors are never cached; the repeat "
            "index is in the key, so repeats are real replicates, and the variant name is too, so the two arms of "
            "an A/A test are independent. The summary says how many answers of each variant came from the cache "
            "(`… from the response cache`); a cached answer costs nothing in this run. `--no-cache` (or "
            "`noCache: true` in eval.yaml) neither reads nor writes it. A text of "
            f"{BLOB_MIN_CHARS // 1024} KiB or more in an answer (the output, the same text in its trace, a long "
            "tool output) is stored once, by its sha256, however many answers hold it.",
            "",
        ]
    )


_RENDER = {
    "assertions": assertions_reference,
    "script": script_reference,
    "judge": judge_reference,
    "cache": cache_reference,
}


def render(topic: str | None = None) -> str:
    """One topic's reference in Markdown, or all of them (``docs/reference.md``)."""
    if topic is not None:
        return _RENDER[topic]()
    head = (
        "# knowmeter reference\n\nGenerated from the code by `knowmeter docs` "
        "(`python -m knowmeter.reference > docs/reference.md`); a test keeps this file in step.\n"
    )
    return "\n".join([head, *(_RENDER[t]() for t in TOPICS)])


if __name__ == "__main__":  # regenerate docs/reference.md
    print(render(), end="")
