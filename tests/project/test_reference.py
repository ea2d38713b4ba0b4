"""Issue 17 item 7: the reference is generated from the code and cannot drift — every registered
assertion type has keys and an example that loads, the script protocol's example reply parses
into the trace it describes, the judge envelope parses, the cache key fields are the real ones,
and docs/reference.md is exactly what `knowmeter docs` prints."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.executors._script import parse_script_stdout
from knowmeter.grading import (
    BUILTIN_TYPES,
    DEFAULT_LAYER,
    assertion_class,
    assertion_types,
    load_assertion,
    parse_judge_reply,
)
from knowmeter.reference import JUDGE_REPLY, SCRIPT_REPLY, TOPICS, render
from knowmeter.runner._cache import cache_key

REPO = Path(__file__).resolve().parents[2]


def test_every_assertion_type_is_documented_with_an_example_that_loads(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text("def has_refund_window(output, sample, trace):\n    return True\n")
    registered = assertion_types()
    assert [t.name for t in BUILTIN_TYPES] == list(dict.fromkeys(t.name for t in BUILTIN_TYPES))  # no name twice
    assert {t.name for t in BUILTIN_TYPES} == set(registered)
    text = render("assertions")
    assert [line.split("`")[1] for line in text.splitlines() if line.startswith("### ")] == sorted(registered)
    for kind in BUILTIN_TYPES:
        assert kind.summary and not kind.summary.endswith(".")
        loaded = load_assertion(kind.example, f"example {kind.name}", tmp_path)
        assert loaded.type_name == kind.name and type(loaded) is assertion_class(kind.name)
        assert registered[kind.name] == kind.layer == DEFAULT_LAYER.get(kind.name)
        where = f"{kind.layer.value} layer" if kind.layer else "each member in its own layer"
        assert f"### `{kind.name}` — {where}" in text
    assert "  - `pattern` (or `value`): text, required" in text  # regex, from the model's fields
    assert "  - `values` (or `value`): list of text, required" in text  # tools_called


def test_script_protocol_example_is_what_the_parser_reads() -> None:
    result = parse_script_stdout(json.dumps(SCRIPT_REPLY))
    assert result.output == SCRIPT_REPLY["output"] and result.cost_usd == SCRIPT_REPLY["costUSD"]
    calls = result.trace.tool_calls()
    assert [c.tool for c in calls] == ["Grep", "Read"] and result.trace.turns == 2
    assert json.dumps(SCRIPT_REPLY, indent=2) in render("script")


def test_judge_envelope_and_cache_fields() -> None:
    text = render("judge")
    envelope = json.loads(text.split("```json\n")[1].split("\n```")[0])
    assert parse_judge_reply(parse_script_stdout(json.dumps(envelope)).output).score == JUDGE_REPLY["score"]
    cache = render("cache")
    assert all(f"`{name}`" in cache for name in inspect.signature(cache_key).parameters)
    assert "--no-cache" in cache


def test_docs_command_prints_the_checked_in_reference() -> None:
    result = CliRunner().invoke(cli, ["docs"])
    assert result.exit_code == 0
    assert result.output == (REPO / "docs" / "reference.md").read_text(encoding="utf-8"), (
        "docs/reference.md is stale: python -m knowmeter.reference > docs/reference.md"
    )
    for topic in TOPICS:
        assert CliRunner().invoke(cli, ["docs", topic]).output == render(topic)
