"""Spec-by-example: explicit markers (§4.2) and hedging recall (§4.3) in the agent's own prose."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowmeter.analysis import analyze_task
from knowmeter.analysis._phrases import HEDGING_EN, HEDGING_EN_BROAD, _by_first_letter, _en, _recall
from knowmeter.analysis._text import excluded_spans, sentences


def _text_signals(tb, text, source, *, role="assistant", injected=False, **kw):
    trace = tb().say(text, turn=2, role=role, injected=injected).build()
    return [s for s in analyze_task(trace, sample_id="s7", **kw).signals if s.source == source]


# --- explicit markers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "marker",
    [
        "【推断】",
        "【知识缺口】",
        "【未知】",
        "[inferred]",
        "[unknown]",
        "[knowledge gap]",
        "[Knowledge Gap]",
        "[UNKNOWN]",
    ],
)
def test_each_marker_is_a_weak_signal(tb, marker):
    sigs = _text_signals(tb, f"{marker} this data should come from the user_profile table.", "explicit_marker")
    assert len(sigs) == 1
    assert (sigs[0].weight, sigs[0].turn, sigs[0].target) == (0.5, 2, marker)
    assert sigs[0].context == f"{marker} this data should come from the user_profile table."


@pytest.mark.parametrize(
    "text",
    [
        'The convention is to write "[unknown]" when unsure.',
        "Mark guesses with “【推断】” in your answer.",
        "Use 「【未知】」 for unknown fields.",
        "Write `[inferred]` before a guess.",
        "```\nprint('[knowledge gap]')\n```",
        "~~~md\n【推断】 example\n~~~",
        "| field | note |\n|---|---|\n| revenue | [unknown] |",
        "> 【推断】 quoted from the doc",
    ],
)
def test_markers_in_quotes_code_tables_and_blockquotes_do_not_count(tb, text):
    assert _text_signals(tb, text, "explicit_marker") == []


def test_markers_outside_a_code_block_still_count(tb):
    text = "```\n[unknown]\n```\n[unknown] the schema owner is not documented."
    assert len(_text_signals(tb, text, "explicit_marker")) == 1


def test_unclosed_fence_hides_the_rest(tb):
    assert _text_signals(tb, "Here:\n```python\nx = '[unknown]'\n", "explicit_marker") == []


def test_injected_and_user_text_is_never_agent_text(tb):
    text = "【推断】 something. I'm not sure about it."
    assert _text_signals(tb, text, "explicit_marker", injected=True) == []
    assert _text_signals(tb, text, "hedging", injected=True) == []
    assert _text_signals(tb, text, "explicit_marker", role="user") == []
    assert _text_signals(tb, text, "hedging", role="system") == []


def test_repeated_identical_marker_sentence_counts_once(tb):
    trace = tb().say("[unknown] owner.", 1).say("[unknown] owner.", 2).build()
    assert len([s for s in analyze_task(trace, sample_id="s").signals if s.source == "explicit_marker"]) == 1


# --- hedging recall -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "我不确定这个字段在哪个域。",
        "目前没有足够信息回答。",
        "这一点需要查证。",
        "无法确认表的归属。",
        "我只能猜测它的来源。",
        "I'm not sure which domain holds the revenue fields.",
        "There is insufficient information to answer.",
        "I need to verify the table name.",
        "The owner is presumably finance.",
        "I couldn't find any documentation on refunds.",
    ],
)
def test_spec_examples_are_recalled_strictly(tb, sentence):
    sigs = _text_signals(tb, sentence, "hedging")
    assert len(sigs) == 1
    assert (sigs[0].weight, sigs[0].context) == (0.5, sentence)


@pytest.mark.parametrize(
    "sentence", ["这可能是用户画像表。", "It is likely the orders table.", "This is not documented anywhere."]
)
def test_modal_spec_examples_are_left_to_the_classifier(tb, sentence):
    # as often a hypothesis or a remark on a document as knowledge-level doubt (issue 28 labels)
    assert _text_signals(tb, sentence, "hedging") == []
    assert len(_text_signals(tb, sentence, "hedging", hedging_recall="broad")) == 1


@pytest.mark.parametrize(
    "sentence",
    [
        "I assume the table is called orders.",  # a stated premise, not doubt
        "The server might not be running.",  # a debugging hypothesis
        "- 現状: セクション8.3で「ユーザー入力を適切にエスケープ」と記載されているが、具体的な方法が不明確",
        "段階的な実装計画により、実現可能性が高い",
    ],
)
def test_hypotheses_premises_and_review_remarks_are_not_hedging_without_a_classifier(tb, sentence):
    # the last two: real sentences of corpus reviews (445_02 design review, 465_01 requirements
    # review), which the hand labels call remarks on someone else's document
    assert _text_signals(tb, sentence, "hedging") == []


def test_japanese_candidates_are_counted_as_unjudged_without_a_classifier(tb):
    # real sentences: 465_04 (a conjecture about the code it is changing) and 456_06 (review remarks)
    text = "- このメソッドは使用されていない可能性がある\n- フォルダが実際に作成されるか不明\nI assume it works."
    gaps = analyze_task(tb().say(text).build(), sample_id="s")
    assert gaps.signals == () and gaps.hedging_unjudged == 1
    broad = analyze_task(tb().say(text).build(), sample_id="s", hedging_recall="broad")
    assert [s.target for s in broad.signals] == ["可能性があ", "不明"] and broad.hedging_unjudged == 0


@pytest.mark.parametrize(
    "sentence",
    [
        "The answer may be in the config.",
        "I think the owner is finance.",
        "也许是财务部门。",
        "Perhaps the cache is stale.",
    ],
)
def test_soft_phrases_need_the_broad_net(tb, sentence):
    assert _text_signals(tb, sentence, "hedging") == []
    assert len(_text_signals(tb, sentence, "hedging", hedging_recall="broad")) == 1


@pytest.mark.parametrize(
    "text",
    [
        "Run `grep -q 'not sure' log` to check.",
        'The doc says "we are not sure yet" about this.',
        "> I'm not sure this quote is accurate",
        "| status | likely |\n|---|---|",
        "```\n# probably fine\n```",
    ],
)
def test_hedging_in_code_quotes_and_tables_does_not_count(tb, text):
    assert _text_signals(tb, text, "hedging") == []


def test_one_candidate_per_sentence_with_its_window(tb):
    text = "Revenue lives in the ledger. It is likely the orders table, but I'm not sure. Next, check access."
    sigs = _text_signals(tb, text, "hedging")
    assert len(sigs) == 1
    assert sigs[0].context == "It is likely the orders table, but I'm not sure."
    assert sigs[0].window == text
    assert sigs[0].target.lower() == "i'm not sure"


def test_chinese_phrases_are_not_matched_in_japanese(tb):
    # 実行可能 / 不明 are ordinary Japanese; the sentence has kana, so Chinese phrases are skipped
    assert _text_signals(tb, "このスクリプトは実行可能です。必要なら猜测してください。", "hedging") == []


def test_final_output_is_used_when_the_trace_has_no_assistant_text(tb):
    gaps = analyze_task(tb().build(), sample_id="s", output_text="I'm not sure what the owner is.")
    assert [s.source for s in gaps.signals] == ["hedging"]


def test_sentences_and_spans():
    text = "First one. 第二句。Third!\nFourth"
    assert [s.text for s in sentences(text)] == ["First one.", "第二句。", "Third!", "Fourth"]
    t = 'a `code` b "quote" c'
    spans = [t[s:e] for s, e in excluded_spans(t)]
    assert spans == ["`code`", '"quote"']
    assert excluded_spans("don't and it's fine") == []


def test_hedging_phrase_is_reported_as_written_and_length_changing_lowercase_is_safe() -> None:
    from knowmeter.analysis._phrases import AgentText, hedging_signals

    out = hedging_signals([AgentText("Honestly, I'm NOT SURE which file holds it.", 1)], sample_id="s")
    assert [s.target for s in out] == ["I'm NOT SURE"]
    # "İ" lower-cases to two characters: offsets must not drift (the case-insensitive net is used)
    out = hedging_signals([AgentText("İstanbul office: I'm not sure about the schedule.", 1)], sample_id="s")
    assert [s.target for s in out] == ["I'm not sure"]


# --- the English net dispatches on the first letter, and finds what the plain alternation finds --------------

_FRAGMENTS = [
    "i'm not sure",
    "im not certain",
    "not entirely sure",
    "not sure",
    "not",
    "unclear",
    "it's unclear",
    "it is",
    "remains unclear",
    "likely",
    "unlikely",
    "probably.",
    "lack of documentation",
    "lacking",
    "i don't know",
    "i do not have the information",
    "needs to be verified",
    "need to double-checked",
    "can't find",
    "unable to locate",
    "as far as i can tell",
    "to my knowledge",
    "to the best of my",
    "perhaps",
    "might be",
    "i think",
    "it seems",
    "appears to",
    "seems",
    "may bee",
    "x",
    "-",
    "_",
    "'",
    "sure",
    "i",
    "a",
    " ",
]


def _plain(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(p.lower() for p in phrases) + r")\b")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_FRAGMENTS), max_size=12),
    st.lists(st.sampled_from([" ", "", "\n", ", "]), min_size=12, max_size=12),
)
@pytest.mark.slow
def test_dispatched_net_matches_like_the_plain_alternation(words, seps):
    text = "".join(w + s for w, s in zip(words, seps, strict=False))
    for phrases, broad in ((HEDGING_EN, False), (HEDGING_EN + HEDGING_EN_BROAD, True)):
        net = _recall(broad)[0]
        assert [m.span() for m in net.finditer(text)] == [m.span() for m in _plain(phrases).finditer(text)]


def test_phrases_that_do_not_start_with_a_letter_fall_back_to_the_plain_alternation():
    assert _by_first_letter("(?:it'?s |it is )?unclear") == ["it'?s unclear", "it is unclear", "unclear"]
    assert _by_first_letter("lack(?:s|ing)? of") == ["lack(?:s|ing)? of"]
    assert _by_first_letter("(?:a|(?:b|c)d)e") == ["ae", "bde", "cde"]
    assert _by_first_letter("-ish") is None and _by_first_letter("x?y") is None
    net = _en(("-ish", "likely"))
    assert [m.group() for m in net.finditer("likely -ish")] == ["likely"]  # \b before "-" never matches
    assert net.lowered.pattern == _plain(("-ish", "likely")).pattern


def test_the_one_pass_prose_mask_agrees_with_the_line_by_line_one_on_real_messages(shared_dir) -> None:
    # inline code and quotes are found over the whole text when "\n" is its only line break; a
    # trailing U+2028 (a break str.splitlines knows) forces the line-by-line path on the same text
    from pathlib import Path

    from knowmeter.analysis._text import ProseMask
    from knowmeter.traces import load_trace

    corpus = Path(shared_dir) / "reference" / "traces-corpus" / "tielec"
    texts = [
        m.text
        for name in ("issue-456_06_testing_review__5b4ba365.txt", "issue-445_02_design_review__256f23e8.txt")
        for m in load_trace(corpus / name).messages("assistant")
    ]
    assert len(texts) >= 4
    for text in [*texts, '| a | "b" |\n> "quoted"\n```\n`x`\n```\nplain "q" and `c`', "a\n----\nb 'c'"]:
        fast, slow = ProseMask(text), ProseMask(text + "\u2028")
        assert (fast._starts, fast._ends) == (slow._starts, slow._ends)
