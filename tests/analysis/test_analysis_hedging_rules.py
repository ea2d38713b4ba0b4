"""The strict hedging nets, rule by rule, on real messages of the labelled corpus (issue 28 point 4).

Each rule has its positive (a hand-labelled hedge) and its classic false alarm (a message the
labels call no hedge), read from the real log in ``shared/reference``. The Japanese strict net is
asked directly (``languages={"ja"}``): regex-only mode does not count it (its held-out recall is
0 of 2), it only says how many candidates it left unjudged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.analysis import analyze_task
from knowmeter.analysis._phrases import AgentText, hedging_scan
from knowmeter.traces import load_trace

CORPUS = Path("reference") / "traces-corpus" / "tielec"
JA = frozenset({"ja"})


def _message(shared_dir: Path, log: str, index: int, *, corpus: Path = CORPUS) -> str:
    path = next((shared_dir / corpus).glob(f"{log}*"))
    return [m.text for m in load_trace(path).messages("assistant")][index]


def _ja_net(text: str) -> list[str]:
    return [s.context for s in hedging_scan([AgentText(text, 1)], sample_id="s", languages=JA)[0]]


@pytest.mark.parametrize(
    ("log", "index", "sentence"),
    [
        # a conjecture about the code it is changing, then deleted without checking
        ("issue-465_04_implementation_execute", 2, "- このメソッドは使用されていない可能性がある"),
        # whether earlier tests ever ran: a checkable fact it has not checked
        (
            "issue-465_09_evaluation_execute",
            2,
            "- **既存テストの実績**: Phase 1~3で実装された114テストケースは過去に実行されている可能性が高い",
        ),
    ],
)
def test_a_conjecture_about_a_present_state_is_a_japanese_candidate(shared_dir, log, index, sentence):
    assert sentence in _ja_net(_message(shared_dir, log, index))


def test_first_person_cannot_see_is_a_japanese_candidate(shared_dir):
    text = _message(shared_dir, "tielec_issue-391_01", 0, corpus=Path("reference/traces/codex-exec-json"))
    assert any("追加要求が見えない" in s for s in _ja_net(text))


def test_a_forecast_is_not_a_candidate(shared_dir):
    # 465_04 again: "None を返す可能性がある" describes a code path (dictionary-form verb), no doubt
    found = _ja_net(_message(shared_dir, "issue-465_04_implementation_execute", 2))
    assert not any("返す可能性" in s for s in found)
    # 431_06 revise: "再度FAILとなる可能性があります" is what may happen next
    assert _ja_net(_message(shared_dir, "issue-431_06_testing_revise", 2)) == []


@pytest.mark.parametrize(
    ("log", "index"),
    [
        ("issue-465_01_requirements_review", 2),  # "実現可能性が高い": a compound noun in a review
        ("issue-445_02_design_review", 3),  # "記載されているが、具体的な方法が不明確": the document's gap
        ("issue-456_06_testing_review", 1),  # "**現状**: …制約されている可能性がある": a review field
        ("issue-461_06_testing_review", 2),  # "実装の品質自体には問題ない可能性が高い": a judgement
        ("issue-460_00_planning_review", 0),  # "考慮してもよいかもしれません": a polite suggestion
    ],
)
def test_remarks_on_a_reviewed_document_are_not_candidates(shared_dir, log, index):
    assert _ja_net(_message(shared_dir, log, index)) == []


def test_japanese_candidates_are_said_not_counted_in_regex_only_mode(shared_dir):
    path = next((shared_dir / CORPUS).glob("issue-465_04_implementation_execute*"))
    gaps = analyze_task(load_trace(path), sample_id="s")
    assert [s for s in gaps.signals if s.source == "hedging"] == [] and gaps.hedging_unjudged == 1


@pytest.mark.parametrize("index", [0, 3])
def test_english_debugging_hypotheses_are_not_counted(shared_dir, index):
    # 460_09: "it appears the file wasn't successfully created", "likely used a relative path"
    text = _message(shared_dir, "issue-460_09_evaluation_revise", index)
    assert hedging_scan([AgentText(text, 1)], sample_id="s")[0] == []
    assert hedging_scan([AgentText(text, 1)], sample_id="s", broad=True)[0] != []  # the classifier sees them


@pytest.mark.parametrize(
    "sentence",
    [
        "I'm not sure why the test fails here.",  # a hypothesis about a failure
        "I'm not sure the design covers retries.",  # a remark on the reviewed document
        "原因は分からないが、設定ファイルのエラーかもしれない。",
    ],
)
def test_a_strict_phrase_inside_a_hypothesis_or_a_review_is_not_counted(sentence):
    assert hedging_scan([AgentText(sentence, 1)], sample_id="s", languages=frozenset({"en", "ja"}))[0] == []
    assert hedging_scan([AgentText(sentence, 1)], sample_id="s", broad=True)[0] != []


def test_first_person_doubt_about_a_fact_is_still_counted_in_english():
    found = hedging_scan([AgentText("I couldn't find where the refund rules are defined.", 1)], sample_id="s")[0]
    assert [s.target for s in found] == ["I couldn't find"]
