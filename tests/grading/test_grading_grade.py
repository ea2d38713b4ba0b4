"""Layered scores, the composite, the stored Grade, and omk's example files graded unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowmeter.grading import Grade, JudgeSpec, assertion_layer_score, composite_score, load_assertions, ratio_score
from knowmeter.samples import Sample, load_samples
from knowmeter.traces import ToolStatus
from tests.grading.grading_helpers import ToolCall, asked, judge, load, make_result, reply, run, sample


def test_ratio_and_layer_formulas() -> None:
    assert ratio_score(0, 4) == 1.0
    assert ratio_score(4, 4) == 5.0
    assert ratio_score(2.5, 3) == pytest.approx(1 + 4 * 2.5 / 3)
    assert ratio_score(0, 0) is None
    items = [("fact", 1.0, True), ("fact", 1.0, None), ("behavior", 2.0, False), ("fact", 2.0, False)]
    assert assertion_layer_score(items, "fact") == pytest.approx(1 + 4 / 3)
    assert assertion_layer_score(items, "behavior") == 1.0
    assert assertion_layer_score([("fact", 1.0, None)], "fact") is None


@pytest.mark.parametrize(
    ("layers", "composite", "used"),
    [
        ({"fact": None, "behavior": None, "judge": None}, None, []),
        ({"fact": 4.0, "behavior": None, "judge": None}, 4.0, ["fact"]),
        ({"fact": None, "behavior": None, "judge": 2.0}, 2.0, ["judge"]),
        ({"fact": 5.0, "behavior": 1.0, "judge": None}, 3.0, ["fact", "behavior"]),
        ({"fact": 4.5, "behavior": 4.0, "judge": 4.5}, pytest.approx(13 / 3), ["fact", "behavior", "judge"]),
        ({"fact": 1.0, "behavior": None, "judge": 1.0}, 1.0, ["fact", "judge"]),  # low scores are not missing
    ],
)
def test_composite_is_the_mean_of_present_layers(
    layers: dict[str, float | None], composite: object, used: list[str]
) -> None:
    assert composite_score(layers) == (composite, used)


TOOLS: list[ToolCall] = [("Read", {"file_path": "db.py"}, "query = f'...'", ToolStatus.SUCCESS)]
FACT = [{"type": "contains", "value": "SQL"}, {"type": "contains", "value": "XSS"}]  # 1 of 2 → 3.0
BEHAVIOR = [{"type": "tools_called", "values": ["Read"]}]  # → 5.0


@pytest.mark.parametrize(
    ("raw", "judges", "layers", "used", "composite"),
    [
        ([], [], (None, None, None), [], None),
        (FACT, [], (3.0, None, None), ["fact"], 3.0),
        (FACT + BEHAVIOR, [], (3.0, 5.0, None), ["fact", "behavior"], 4.0),
        (FACT + BEHAVIOR, [judge([reply(1)])], (3.0, 5.0, 1.0), ["fact", "behavior", "judge"], 3.0),
        (BEHAVIOR, [judge([reply(4)])], (None, 5.0, 4.0), ["behavior", "judge"], 4.5),
    ],
)
def test_grade_layers(
    raw: list[dict[str, Any]],
    judges: list[JudgeSpec],
    layers: tuple[float | None, ...],
    used: list[str],
    composite: float | None,
) -> None:
    g = run(sample(rubric="r"), make_result("SQL", tools=TOOLS), load(raw), judges)
    assert (g.layers.fact, g.layers.behavior, g.layers.judge) == layers
    assert g.layers_used == used
    assert g.composite == composite


def test_passed_is_null_without_evaluated_assertions() -> None:
    assert run(sample(), make_result("x")).passed is None
    assert run(sample(), make_result("x"), load([{"type": "semantic_similarity", "reference": "y"}])).passed is None
    assert run(sample(), make_result("x"), load([{"type": "contains", "value": "x"}])).passed is True


def test_grade_round_trips_through_json() -> None:
    s = sample(rubric="r", dimensions={"a": "first", "b": "second"})
    raw: list[dict[str, Any]] = [
        *FACT,
        {"type": "assert-set", "mode": "any", "assertions": BEHAVIOR},
        {"type": "answer_relevancy"},
        {"type": "cost_max", "value": 1},
    ]
    g = run(s, make_result("SQL", tools=TOOLS), load(raw), [judge([reply(4)])])
    d = g.to_dict()
    text = json.dumps(d, ensure_ascii=False)
    back = Grade.model_validate(json.loads(text))
    assert back == g
    assert set(d) == {
        "assertions",
        "layers",
        "composite",
        "layers_used",
        "passed",
        "judges",
        "judge_error",
        "judge_cost_usd",
    }
    assert set(d["assertions"][0]) == {"type", "layer", "weight", "passed", "negated", "message"}
    assert set(d["judges"][0]) == {
        "judge",
        "model",
        "prompt_hash",
        "scores",
        "mean",
        "sd",
        "failures",
        "reasoning",
        "reason",
        "dimensions",
        "cost_usd",
        "error",
    }
    assert d["assertions"][2]["details"]["assertions"][0]["type"] == "tools_called"


def test_a_failed_execution_is_still_gradeable() -> None:
    g = run(
        sample(rubric="r"),
        make_result("partial SQL", error="timeout after 300s"),
        load([*FACT, {"type": "cost_max", "value": 1}]),
        [judge([reply(2)])],
    )
    assert g.layers.fact == 3.0
    assert g.layers.behavior == 1.0  # cost unknown fails
    assert g.layers.judge == 2.0


# --- omk example files, unchanged ----------------------------------------------------------

GOOD_REVIEW = {
    "s001": "存在 SQL 注入风险：请改用参数化查询，例如 db.execute('SELECT ... WHERE name=?', [username])。",
    "s002": "缺少错误处理：请用 try/catch 包裹，并检查 res.ok / status，处理 error。",
    "s003": "存在 XSS 风险：innerHTML 直接拼接用户输入，应改用 textContent 或 escape。",
}


def omk_samples(shared_dir: Path, name: str) -> tuple[Path, list[Sample]]:
    folder = shared_dir / "reference" / "omk" / name
    path = next(folder.glob("eval-samples.*"))
    return folder, list(load_samples(path).samples)


def test_omk_code_review_grades_unchanged(shared_dir: Path) -> None:
    folder, samples = omk_samples(shared_dir, "code-review")
    assert len(samples) == 3
    for s in samples:
        assertions = load_assertions(s.assertions, f"eval-samples.json: sample {s.sample_id!r}", folder)
        j = judge(lambda r: reply(5 if "security" in r.prompt or "robustness" in r.prompt else 4))
        g = run(s, make_result(GOOD_REVIEW[s.sample_id]), assertions, [j])
        assert g.layers.fact == 5.0, [a.message for a in g.assertions]
        assert g.layers.judge == 4.5  # mean of the two dimensions
        assert g.judges[0].dimensions is not None and len(g.judges[0].dimensions) == 2
        assert g.layers_used == ["fact", "judge"]
        bad = run(s, make_result("代码没有问题。"), assertions)
        assert bad.layers.fact is not None and bad.layers.fact < 2.5


def test_omk_code_review_weights(shared_dir: Path) -> None:
    folder, samples = omk_samples(shared_dir, "code-review")
    s = samples[0]
    assertions = load_assertions(s.assertions, "eval-samples.json", folder)
    assert [a.weight for a in assertions] == [1, 1, 0.5, 0.5]
    g = run(s, make_result("SQL 注入"), assertions)
    assert g.layers.fact == pytest.approx(1 + 4 * 2.5 / 3)  # 参数化 missing (0.5 of 3)


def test_omk_gold_dataset_has_only_a_judge_layer(shared_dir: Path) -> None:
    folder, samples = omk_samples(shared_dir, "gold-dataset")
    assert len(samples) == 10
    for s in samples:
        assert load_assertions(s.assertions, "eval-samples.yaml", folder) == []
        g = run(s, make_result("答案"), judges=[judge([reply(3)])])
        assert g.layers_used == ["judge"]
        assert g.composite == 3.0
        assert g.judge_error is None


def test_omk_rag_eval_with_and_without_a_judge(shared_dir: Path) -> None:
    folder, samples = omk_samples(shared_dir, "rag-eval")
    assert len(samples) == 3
    by_id = {s.sample_id: s for s in samples}
    loaded = {
        sid: load_assertions(s.assertions, f"eval-samples.yaml: sample {sid!r}", folder) for sid, s in by_id.items()
    }
    assert [a.type for a in loaded["rag_concise_summary"]] == [
        "faithfulness",
        "answer_relevancy",
        "max_length",
        "context_recall",
    ]
    answer = "context 未提及 M1 的功耗。"
    refuse = by_id["rag_should_refuse"]
    no_judge = run(refuse, make_result(answer), loaded["rag_should_refuse"])
    assert [a.passed for a in no_judge.assertions] == [None, True]
    assert no_judge.layers.fact == 5.0
    with_judge = run(refuse, make_result(answer), loaded["rag_should_refuse"], [judge([reply(4)])])
    assert [a.passed for a in with_judge.assertions] == [False, True]  # faithfulness threshold 5
    assert with_judge.layers.fact == 3.0
    assert with_judge.layers_used == ["fact", "judge"]
    summary = by_id["rag_concise_summary"]
    j = judge([reply(4)])
    g = run(summary, make_result("归并排序 O(n log n)、O(n) 空间、稳定。"), loaded["rag_concise_summary"], [j])
    assert [a.passed for a in g.assertions] == [True, True, True, True]  # default threshold 3
    recall_prompts = [r.prompt for r in asked(j) if "<<<BEGIN REFERENCE" in r.prompt]
    assert len(recall_prompts) == 1
    assert "时间复杂度 O(n log n);空间复杂度 O(n);稳定排序" in recall_prompts[0]
