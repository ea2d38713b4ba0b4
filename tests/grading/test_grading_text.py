"""Text assertions: pass, fail, `not`, Unicode, JSON."""

from __future__ import annotations

import pytest

from knowmeter.errors import InputError
from tests.grading.grading_helpers import check, load, make_result, run, sample

CASES = [
    # (assertion, output, expected)
    ({"type": "contains", "value": "SQL"}, "存在 SQL 注入", True),
    ({"type": "contains", "value": "sql"}, "存在 SQL 注入", False),  # case-sensitive by default
    ({"type": "contains", "value": "sql", "ignore_case": True}, "存在 SQL 注入", True),
    ({"type": "contains", "value": "注入"}, "存在 SQL 注入", True),
    ({"type": "contains", "value": "café"}, "un cafe\u0301 noir", True),  # NFD output, NFC value
    ({"type": "contains", "value": 17}, "17 boys", True),  # YAML numbers are text to look for
    ({"type": "not_contains", "value": "没有问题"}, "有 SQL 注入", True),
    ({"type": "not_contains", "value": "没有问题"}, "代码没有问题", False),
    ({"type": "icontains", "value": "STRASSE"}, "die Straße", True),  # full case folding
    ({"type": "icontains", "value": "xss"}, "XSS risk", True),
    ({"type": "icontains", "value": "csrf"}, "XSS risk", False),
    ({"type": "contains_all", "values": ["SQL", "注入"]}, "SQL 注入", True),
    ({"type": "contains_all", "values": ["SQL", "参数化"]}, "SQL 注入", False),
    ({"type": "contains_any", "values": ["未提及", "没有"]}, "context 中没有", True),
    ({"type": "contains_any", "values": ["未提及", "没有"]}, "功耗 5W", False),
    ({"type": "contains_any", "value": "x"}, "xyz", True),  # a single value is accepted
    ({"type": "regex", "pattern": "try[\\s\\S]*catch|错误", "flags": "i"}, "TRY {} CATCH", True),
    ({"type": "regex", "pattern": "try[\\s\\S]*catch"}, "TRY {} CATCH", False),
    ({"type": "regex", "pattern": "^b", "flags": "m"}, "a\nb", True),
    ({"type": "regex", "pattern": "^b"}, "a\nb", False),
    ({"type": "regex", "pattern": "a.b", "flags": "s"}, "a\nb", True),
    ({"type": "regex", "pattern": "\\d{3}"}, "code ١٢٣", True),  # Unicode digits
    ({"type": "starts_with", "value": "答案"}, "\n 答案：17", True),
    ({"type": "starts_with", "value": "17"}, "答案：17", False),
    ({"type": "ends_with", "value": "。"}, "完成。\n", True),
    ({"type": "ends_with", "value": "!"}, "done.", False),
    ({"type": "equals", "value": "Paris"}, "  Paris\n", True),
    ({"type": "equals", "value": "Paris"}, "paris", False),
    ({"type": "equals", "value": "Zoë"}, "Zoe\u0308", True),
    ({"type": "not_equals", "value": "Paris"}, "London", True),
    ({"type": "not_equals", "value": "Paris"}, "Paris", False),
    ({"type": "min_length", "value": 3}, "👍🏽👍🏽👍🏽", True),
    ({"type": "min_length", "value": 4}, "👍🏽👍🏽👍🏽", False),  # 3 characters, not 6 code points
    ({"type": "max_length", "value": 4}, "自动驾驶", True),
    ({"type": "max_length", "value": 3}, "自动驾驶", False),
    ({"type": "max_length", "value": 4}, "cafe\u0301", True),  # decomposed accent is one character
    ({"type": "word_count_min", "value": 4}, "合并排序", True),  # each Han character is a word
    ({"type": "word_count_min", "value": 3}, "hello, world!", False),
    ({"type": "word_count_max", "value": 2}, "hello, world!", True),
    ({"type": "word_count_max", "value": 2}, "naïve café au lait", False),
    ({"type": "json_valid"}, '{"a": [1, 2]}', True),
    ({"type": "json_valid"}, '```json\n{"a": 1}\n```', True),  # one fenced block is accepted
    ({"type": "json_valid"}, "{'a': 1}", False),
    ({"type": "json_valid"}, 'Here: ```json\n{"a": 1}\n``` done', False),
]


@pytest.mark.parametrize(("raw", "output", "expected"), CASES)
def test_text_assertion(raw: dict[str, object], output: str, expected: bool) -> None:
    assert check(raw, output) is expected


@pytest.mark.parametrize(("raw", "output", "expected"), CASES)
def test_not_inverts_every_text_assertion(raw: dict[str, object], output: str, expected: bool) -> None:
    g = run(sample(), make_result(output), load([{**raw, "not": True}]))
    assert g.assertions[0].passed is (not expected)
    assert g.assertions[0].negated is True
    assert g.assertions[0].message.startswith("not: ")


SCHEMA = {
    "type": "object",
    "required": ["name", "age"],
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
}


def test_json_schema_pass_and_fail_with_path() -> None:
    ok = run(sample(), make_result('{"name": "李雷", "age": 17}'), load([{"type": "json_schema", "schema": SCHEMA}]))
    assert ok.assertions[0].passed is True
    bad = run(sample(), make_result('{"name": "李雷", "age": -1}'), load([{"type": "json_schema", "schema": SCHEMA}]))
    assert bad.assertions[0].passed is False
    assert "age" in bad.assertions[0].message
    not_json = run(sample(), make_result("name: x"), load([{"type": "json_schema", "schema": SCHEMA}]))
    assert not_json.assertions[0].passed is False
    assert "not valid JSON" in not_json.assertions[0].message


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"type": "json_schema", "schema": {"type": "objekt"}}, "invalid JSON Schema"),
        ({"type": "regex", "pattern": "(unclosed"}, "invalid regular expression"),
        ({"type": "regex", "pattern": "a", "flags": "q"}, "unknown regex flag"),
        ({"type": "contains"}, "missing key 'value'"),
        ({"type": "contains", "value": ""}, "value"),
        ({"type": "contains", "valeu": "x"}, "unknown key 'valeu'"),
        ({"type": "min_length", "value": -1}, "value"),
        ({"type": "contains_all", "values": []}, "values"),
    ],
)
def test_bad_config_is_an_input_error_at_load(raw: dict[str, object], fragment: str) -> None:
    with pytest.raises(InputError) as exc:
        load([raw])
    message = str(exc.value)
    assert message.startswith("test.yaml: sample 's1': assertion #1")
    assert fragment in message
    assert "\n" not in message


def test_text_messages_say_what_was_found() -> None:
    g = run(
        sample(),
        make_result("有 SQL 注入"),
        load(
            [
                {"type": "contains", "value": "SQL"},
                {"type": "contains_all", "values": ["SQL", "XSS", "CSRF"]},
                {"type": "max_length", "value": 2},
            ]
        ),
    )
    assert g.assertions[0].message == "'SQL' found in the answer"
    assert g.assertions[1].message.startswith("missing 2 of 3")
    assert g.assertions[1].details == {"missing": ["XSS", "CSRF"]}
    assert g.assertions[2].details == {"actual": 8}  # 有 ␠ S Q L ␠ 注 入
