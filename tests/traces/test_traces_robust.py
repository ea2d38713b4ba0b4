"""Tolerance: missing or null fields anywhere in a real record never make an adapter raise."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from knowmeter.traces import Trace, parse_claude_session, parse_claude_stream, parse_codex_exec, parse_codex_rollout
from tests.traces.traces_helpers import records

pytestmark = pytest.mark.slow

Parser = Callable[[list[str]], Trace]

PARSERS: dict[str, tuple[str, Parser]] = {
    "claude-stream": ("claude_failures/stdout.jsonl", lambda lines: parse_claude_stream(lines)[0]),
    "claude-session": ("claude_failures/session/278e26a5-be1e-4152-ab6c-2222e364c483.jsonl", parse_claude_session),
    "codex-exec": ("codex_failures_readonly/stdout.jsonl", lambda lines: parse_codex_exec(lines)[0]),
    "codex-rollout": (
        "codex_failures_readonly/session/rollout-2026-11-22T09-40-17-01a202a0-b9dd-7303-9e9e-d61eadddb9df.jsonl",
        parse_codex_rollout,
    ),
}


def _mutations(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The record with one field removed or set to null, for every field down to content blocks."""

    def paths(node: Any, prefix: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        if isinstance(node, dict):
            for k, v in node.items():
                yield (*prefix, k)
                if len(prefix) < 4:
                    yield from paths(v, (*prefix, k))
        elif isinstance(node, list) and len(prefix) < 4:
            for i, v in enumerate(node[:2]):
                yield from paths(v, (*prefix, i))

    for path in paths(rec, ()):
        for mode in ("drop", "null", "string"):
            out = copy.deepcopy(rec)
            parent = out
            for step in path[:-1]:
                parent = parent[step]
            if mode == "drop" and isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = None if mode == "null" else "?"
            yield out


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_no_mutated_field_makes_the_parser_raise(captures: Path, kind: str) -> None:
    rel, parse = PARSERS[kind]
    recs = records(captures / rel)
    lines = [json.dumps(r) + "\n" for r in recs]
    baseline = parse(lines)
    tried = 0
    for i, rec in enumerate(recs):
        if len(json.dumps(rec)) > 20000:  # prompt snapshots: large, and of no interest to the parser
            continue
        for mutated in _mutations(rec):
            trace = parse([*lines[:i], json.dumps(mutated) + "\n", *lines[i + 1 :]])
            assert len(trace.tool_calls()) <= len(baseline.tool_calls()) + 1
            tried += 1
    assert tried > 100
