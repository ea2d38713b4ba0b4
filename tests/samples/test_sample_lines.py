"""A JSONL sample line is checked for nesting and lone surrogates only when its text could hold
them (issue 32: the two walks of every record were half of sample loading's CPU), with the same
outcome as walking every record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowmeter import _yaml, jsonio
from knowmeter._yaml import MAX_DEPTH, parse_json
from knowmeter.errors import InputError
from knowmeter.samples import load_samples

LINES = [
    '{"sample_id": "plain", "prompt": "Refund window?", "assertions": [{"type": "contains", "value": "30"}]}',
    '{"sample_id": "escaped", "prompt": "lone \\ud800 and a pair \\ud83d\\ude00 and \\u00e9"}',
    '{"sample_id": "brackets", "prompt": "' + "[{" * 80 + '"}',  # many brackets, one level
    '{"sample_id": "deep-enough", "prompt": "p", "metadata": {"a": '
    + "[" * (MAX_DEPTH - 2)
    + "]" * (MAX_DEPTH - 2)
    + "}}",
    '{"sample_id": "backslash-u", "prompt": "C:\\\\users\\\\x"}',
]


@pytest.mark.parametrize("line", LINES)
def test_a_line_parses_as_walking_every_record_would(line: str) -> None:
    walked = json.loads(line)
    _yaml.check_shape(walked, "f")
    assert parse_json(line, "f", "line 1") == jsonio.without_lone_surrogates(walked)
    assert parse_json(line.encode(), "f", "line 1") == jsonio.without_lone_surrogates(walked)


def test_samples_keep_their_text_and_lose_only_lone_surrogates(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(LINES) + "\n")
    samples = load_samples(path).by_id()
    assert samples["escaped"].prompt == "lone \ufffd and a pair \U0001f600 and é"
    assert samples["brackets"].prompt == "[{" * 80
    assert samples["backslash-u"].prompt == "C:\\users\\x"


def test_a_line_nested_deeper_than_the_limit_is_one_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH  # in metadata: one level more than the limit
    path.write_text(LINES[0] + "\n" + '{"sample_id": "deep", "prompt": "p", "metadata": {"a": ' + deep + "}}\n")
    with pytest.raises(InputError, match=rf"s\.jsonl: line 2: nested deeper than {MAX_DEPTH} levels"):
        load_samples(path)


def test_a_plain_line_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    walks: list[str] = []

    def spy(name: str, real: Any) -> Any:
        def walk(*args: Any, **kwargs: Any) -> Any:
            walks.append(name)
            return real(*args, **kwargs)

        return walk

    monkeypatch.setattr(_yaml, "check_shape", spy("check_shape", _yaml.check_shape))
    monkeypatch.setattr(_yaml, "without_lone_surrogates", spy("surrogates", jsonio.without_lone_surrogates))
    parse_json(LINES[0], "f", "line 1")
    assert walks == []
    parse_json(LINES[1], "f", "line 2")
    assert walks == ["surrogates"]
