"""Reading session files as bytes (``read_lines`` + ``orjson``) gives what a text-mode read gives,
down to the odd file: a byte-order mark, CRLF or CR line ends, invalid UTF-8, JSON that only the
standard library accepts, truncated and blank lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from knowmeter.traces import parse_claude_session, parse_codex_rollout, read_lines
from knowmeter.traces._claude_session import _WANTED, _skipped_type
from knowmeter.traces._common import loads_line

SESSION = "claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
ROLLOUT = "codex_failures_readonly/session/rollout-2026-11-22T09-40-17-01a202a0-b9dd-7303-9e9e-d61eadddb9df.jsonl"


def _text_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        return list(fh)


def _odd_variants(body: bytes) -> dict[str, bytes]:
    lines = body.splitlines(keepends=True)
    user = json.dumps({"type": "user", "uuid": "odd-1", "message": {"role": "user", "content": "caf\udce9 ok"}})
    hello = b'{"type":"user","uuid":"odd-0","message":{"role":"user","content":"hello"}}\n'
    return {
        "as is": body,
        "bom": b"\xef\xbb\xbf" + hello + body,  # before a line that is decoded, not skipped
        "crlf": body.replace(b"\n", b"\r\n"),
        "cr": body.replace(b"\n", b"\r"),
        "invalid utf-8": body.replace(b"the ", b"th\xff ").replace(b"Read", b"R\xc3ad", 2),
        "lone surrogate escape": b"".join([*lines[:2], user.encode() + b"\n", *lines[2:]]),
        "nan and text after the value": b"".join(
            [
                *lines[:2],
                b'{"type":"user","uuid":"odd-2","x":NaN,"message":{"role":"user","content":"hi"}}\n',
                lines[2].rstrip(b"\n") + b" trailing\n",
                *lines[3:],
            ]
        ),
        "truncated last line": body[: len(body) - len(lines[-1]) // 2],
        "blank and whitespace lines": b"\n  \n".join(lines),
    }


def _same(a: object, b: object) -> None:
    assert json.dumps(a, default=lambda o: o.to_dict(), sort_keys=True) == json.dumps(
        b, default=lambda o: o.to_dict(), sort_keys=True
    )


@pytest.mark.parametrize("variant", list(_odd_variants(b"{}\n{}\n{}\n{}\n")))
def test_claude_session_from_bytes_equals_text_mode(tmp_path: Path, ref_traces: Path, variant: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(_odd_variants((ref_traces / SESSION).read_bytes())[variant])
    from_text = parse_claude_session(_text_lines(path))
    from_bytes = parse_claude_session(read_lines(path))
    _same(from_bytes.events, from_text.events)
    _same(from_bytes.meta, from_text.meta)
    assert len(from_bytes.tool_calls()) > 10
    if variant == "invalid utf-8":
        assert any("\ufffd" in m.text for m in from_bytes.messages("assistant"))
    if variant == "lone surrogate escape":
        # read as U+FFFD: a lone surrogate is not text, and results.jsonl (UTF-8) cannot hold it
        assert any(m.text == "caf\ufffd ok" for m in from_bytes.messages("user"))


@pytest.mark.parametrize("variant", ["as is", "bom", "crlf", "cr", "invalid utf-8", "truncated last line"])
def test_codex_rollout_from_bytes_equals_text_mode(tmp_path: Path, captures: Path, variant: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(_odd_variants((captures / ROLLOUT).read_bytes())[variant])
    from_text, from_bytes = parse_codex_rollout(_text_lines(path)), parse_codex_rollout(read_lines(path))
    _same(from_bytes.events, from_text.events)
    _same(from_bytes.meta, from_text.meta)


@pytest.mark.parametrize(
    "line", ['{"a": 1}\n', '{"a": "\\ud800"}', '{"a": NaN}', '{"a": 1} tail', ' {"a": [1.5e3]}', '{"a": "\\u00e9\\n"}']
)
def test_loads_line_agrees_with_the_standard_library(line: str) -> None:
    """… except that a lone surrogate escape reads as U+FFFD (as ``jsonio.loads`` reads it)."""
    expected = json.loads(json.dumps(json.JSONDecoder().raw_decode(line.strip())[0]).replace("\\ud800", "\\ufffd"))
    assert repr(loads_line(line)) == repr(expected)
    assert repr(loads_line(line.encode())) == repr(expected)


def test_loads_line_refuses_what_is_not_json() -> None:
    for bad in ('{"a": 1', "", "[1, 2", b"\xff\xfe"):
        with pytest.raises(ValueError):
            loads_line(bad)


_FRAGMENTS = st.sampled_from(
    [
        '{"type":"',
        '"type":"',
        "user",
        "assistant",
        "system",
        "progress",
        "summary",
        "ai-title",
        '"',
        "}",
        "{",
        ",",
        ":",
        "x",
        '"data":{',
        " ",
        "\n",
        "attachment",
        "us",
        "a",
        "s",
        '"type":"type":"',
    ]
)


@given(st.lists(_FRAGMENTS, max_size=14).map("".join))
@example('x"type":"type":"user""type":"progress"')  # an event type overlapping the first "type":" by its quote
@example('x"type":"progress""type":"assistant"type":"x"')  # ... and the last one
@example('x"type":"attachment","data":{"type":"system"}}')  # an initial that is an event's, then one that is
@example('x"type":"us')  # cut off inside a type
def test_the_raw_skip_rule_is_the_substring_rule_it_replaces(text: str) -> None:
    """A line is skipped undecoded when it starts with an unwanted ``{"type":…}`` or has a
    ``"type":"`` but none of the three event types' ``"type":"…"`` (the rule as first written)."""
    line = text.encode()
    if text.startswith('{"type":"'):
        expected = text[9 : text.find('"', 9)] not in _WANTED
    else:
        expected = '"type":"' in text and not any(f'"type":"{t}"' in text for t in ("user", "assistant", "system"))
    assert _skipped_type(line) == expected
