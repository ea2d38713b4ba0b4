"""Loading assertions: the registry, layers, weights, `not`, and `assert-set`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from knowmeter.errors import InputError
from knowmeter.grading import DEFAULT_LAYER, assertion_types, load_assertions
from tests.grading.grading_helpers import judge, load, make_result, reply, run, sample

ALL_TYPES = {
    "contains",
    "not_contains",
    "icontains",
    "contains_all",
    "contains_any",
    "regex",
    "starts_with",
    "ends_with",
    "equals",
    "not_equals",
    "min_length",
    "max_length",
    "word_count_min",
    "word_count_max",
    "json_valid",
    "json_schema",
    "rouge_n_min",
    "bleu_min",
    "levenshtein_max",
    "tools_called",
    "tools_not_called",
    "tools_count_min",
    "tools_count_max",
    "tool_input_contains",
    "tool_input_not_contains",
    "tool_output_contains",
    "turns_min",
    "turns_max",
    "cost_max",
    "latency_max",
    "assert-set",
    "semantic_similarity",
    "faithfulness",
    "answer_relevancy",
    "context_recall",
    "custom",
}


def test_every_required_type_is_registered_and_classified() -> None:
    types = assertion_types()
    assert set(types) == ALL_TYPES
    assert set(DEFAULT_LAYER) == ALL_TYPES - {"assert-set"}
    behavior = {t for t, layer in types.items() if layer == "behavior"}
    assert behavior == {
        "tools_called",
        "tools_not_called",
        "tools_count_min",
        "tools_count_max",
        "tool_input_contains",
        "tool_input_not_contains",
        "tool_output_contains",
        "turns_min",
        "turns_max",
        "cost_max",
        "latency_max",
    }


def test_unknown_type_names_the_place_and_lists_valid_types() -> None:
    with pytest.raises(InputError) as exc:
        load_assertions(
            [{"type": "contains", "value": "a"}, {"type": "containz", "value": "a"}],
            "eval-samples.yaml: sample 's003'",
            Path.cwd(),
        )
    message = str(exc.value)
    assert message.startswith("eval-samples.yaml: sample 's003': assertion #2: unknown assertion type 'containz'")
    assert "did you mean 'contains'?" in message
    for t in ("assert-set", "bleu_min", "tools_called", "custom"):
        assert t in message


@pytest.mark.parametrize("raw", [[{"value": "x"}], ["contains"], [{"type": 3}]])
def test_malformed_assertions_are_input_errors(raw: list[object]) -> None:
    with pytest.raises(InputError, match="must be a mapping with a 'type' key"):
        load_assertions(raw, "f.yaml: sample 'a'", Path.cwd())
    with pytest.raises(InputError, match="must be a list"):
        load_assertions({"type": "contains"}, "f.yaml: sample 'a'", Path.cwd())  # type: ignore[arg-type]


def test_common_keys() -> None:
    [a] = load([{"type": "contains", "value": "x", "weight": 0.5, "not": True, "description": "no x"}])
    assert (a.weight, a.negate, a.description) == (0.5, True, "no x")
    with pytest.raises(InputError, match="weight"):
        load([{"type": "contains", "value": "x", "weight": -1}])
    with pytest.raises(InputError, match="weight"):
        load([{"type": "contains", "value": "x", "weight": float("nan")}])


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "contains", "value": "x", "weight": True}, "weight: Input should be a valid number"),
        ({"type": "tools_count_max", "value": False}, "value: Input should be a valid integer"),
        ({"type": "levenshtein_max", "reference": "abc", "threshold": True}, "Input should be a valid integer"),
    ],
)
def test_true_or_false_where_a_number_belongs_is_refused(raw: dict[str, Any], message: str) -> None:
    """As in eval.yaml and as samples.schema.json says: pydantic would read true as 1."""
    with pytest.raises(InputError, match=message):
        load([raw])
    [a] = load([{"type": "contains", "value": "x", "not": True}])  # a flag still takes a bool
    assert a.negate is True


def test_weights_are_summed_not_counted() -> None:
    g = run(
        sample(),
        make_result("SQL 注入"),
        load(
            [
                {"type": "contains", "value": "SQL", "weight": 1},
                {"type": "contains", "value": "注入", "weight": 1},
                {"type": "contains", "value": "参数化", "weight": 0.5},
                {"type": "not_contains", "value": "没有问题", "weight": 0.5},
            ]
        ),
    )
    assert g.layers.fact == pytest.approx(1 + 4 * 2.5 / 3)


def test_zero_weight_is_reported_but_not_scored() -> None:
    g = run(
        sample(),
        make_result("a"),
        load([{"type": "contains", "value": "a"}, {"type": "contains", "value": "b", "weight": 0}]),
    )
    assert g.layers.fact == 5.0
    assert g.assertions[1].passed is False
    assert g.passed is False  # every evaluated assertion counts for `passed`


# --- assert-set ----------------------------------------------------------------------------


def set_of(mode: str, *members: Mapping[str, object], **extra: object) -> dict[str, Any]:
    return {"type": "assert-set", "mode": mode, "assertions": list(members), **extra}


A_YES = {"type": "contains", "value": "alpha"}
A_NO = {"type": "contains", "value": "omega"}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (set_of("all", A_YES, A_YES), True),
        (set_of("all", A_YES, A_NO), False),
        (set_of("any", A_YES, A_NO), True),
        (set_of("any", A_NO, A_NO), False),
        (set_of("all", A_YES, {**A_NO, "not": True}), True),  # `not` inside a set
        (set_of("any", A_NO, set_of("all", A_YES, A_YES)), True),  # nested
        (set_of("all", A_YES, set_of("any", A_NO, A_NO)), False),
        ({**set_of("all", A_YES, A_NO), "not": True}, True),  # `not` on the set
    ],
)
def test_assert_set(raw: dict[str, Any], expected: bool) -> None:
    g = run(sample(), make_result("alpha beta"), load([raw]))
    assert g.assertions[0].passed is expected
    assert g.assertions[0].details is not None
    members = g.assertions[0].details["assertions"]
    assert isinstance(members, list)
    assert len(members) == len(raw["assertions"])


def test_assert_set_counts_once_with_its_weight() -> None:
    g = run(sample(), make_result("alpha"), load([set_of("all", A_YES, A_NO, weight=3), A_YES]))
    assert g.layers.fact == pytest.approx(1 + 4 * 1 / 4)


SIM = {"type": "semantic_similarity", "reference": "alpha"}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (set_of("all", A_YES, SIM), None),  # unknown member could decide
        (set_of("all", A_NO, SIM), False),  # a failing member decides "all"
        (set_of("any", A_YES, SIM), True),  # a passing member decides "any"
        (set_of("any", A_NO, SIM), None),
    ],
)
def test_assert_set_with_unevaluated_member_uses_three_valued_logic(
    raw: dict[str, object], expected: bool | None
) -> None:
    g = run(sample(), make_result("alpha"), load([raw]))
    assert g.assertions[0].passed is expected


def test_assert_set_details_keep_unevaluated_members() -> None:
    g = run(sample(), make_result("alpha"), load([set_of("all", A_YES, SIM)]))
    members = g.to_dict()["assertions"][0]["details"]["assertions"]
    assert [m["passed"] for m in members] == [True, None]
    assert members[1]["message"] == "not evaluated: no judge configured"


def test_assert_set_judge_member_with_a_judge() -> None:
    g = run(sample(), make_result("alpha"), load([set_of("all", A_YES, SIM)]), [judge([reply(5)])])
    assert g.assertions[0].passed is True
    assert g.judge_cost_usd == pytest.approx(0.01)


def test_assert_set_layers() -> None:
    trace_member = {"type": "tools_count_max", "value": 3}
    [behavior_set] = load([set_of("all", trace_member, {"type": "turns_max", "value": 9})])
    assert behavior_set.layer == "behavior"
    with pytest.raises(InputError, match="different layers"):
        load([set_of("all", A_YES, trace_member)])
    [mixed] = load([set_of("all", A_YES, trace_member, layer="behavior")])
    assert mixed.layer == "behavior"


def test_assert_set_member_errors_name_the_member() -> None:
    with pytest.raises(InputError) as exc:
        load([A_YES, set_of("all", A_YES, set_of("any", {"type": "nope"}))])
    assert str(exc.value).startswith(
        "test.yaml: sample 's1': assertion #2: member #2: member #1: unknown assertion type 'nope'"
    )
    with pytest.raises(InputError, match="non-empty list"):
        load([set_of("all")])
    with pytest.raises(InputError, match="mode"):
        load([set_of("most", A_YES)])


def test_each_type_is_defined_in_the_module_the_lazy_table_names() -> None:
    from knowmeter.grading._catalog import BUILTIN_MODULES

    assert set(BUILTIN_MODULES) == ALL_TYPES
    for name, cls in _registered().items():
        assert cls.__module__ == f"knowmeter.grading.{BUILTIN_MODULES[name]}", name


def test_only_a_type_the_catalog_lists_can_register() -> None:
    """A type's layer, summary and example are declared in one place: ``register`` refuses a name
    ``BUILTIN_TYPES`` does not list."""
    from knowmeter.grading._registry import register

    with pytest.raises(ValueError, match="BUILTIN_TYPES"):
        register("contains_twice")


def test_a_run_imports_only_the_check_modules_its_samples_use() -> None:
    code = (
        "import sys\nfrom pathlib import Path\nfrom knowmeter.grading import load_assertions\n"
        "load_assertions([{'type': 'contains', 'value': 'x'}], 'f: sample s1', Path.cwd())\n"
        "print(sorted(m for m in sys.modules if m.startswith('knowmeter.grading._checks')),"
        " 'jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['knowmeter.grading._checks_text'] False"


def _registered() -> dict[str, type]:
    from knowmeter.grading._registry import _REGISTRY

    assertion_types()  # imports every built-in module
    return dict(_REGISTRY)


def test_natural_forms_of_regex_and_tool_lists_are_accepted() -> None:
    """Issue 17 item 8: `regex` with `value`, `tools_called` with a list `value` (both used to be
    rejected or, worse, mean something else)."""
    from knowmeter.traces import ToolStatus

    regex, called, not_called = load(
        [
            {"type": "regex", "value": r"\d+ days"},
            {"type": "tools_called", "value": ["Read", "Grep"]},
            {"type": "tools_not_called", "value": "Bash"},
        ]
    )
    assert regex.pattern == r"\d+ days"  # type: ignore[attr-defined]
    assert called.values == ["Read", "Grep"] and not_called.values == ["Bash"]  # type: ignore[attr-defined]
    result = make_result("within 30 days", tools=[("Read", {"file_path": "a"}, "x", ToolStatus.SUCCESS)])
    g = run(sample(), result, [regex, called, not_called])
    assert [a.passed for a in g.assertions] == [True, False, True]
    assert g.assertions[1].message == "not called: Grep"
    with pytest.raises(InputError, match="unknown key 'values'"):
        load([{"type": "regex", "values": ["x"]}])
