"""Parsing judge replies."""

from __future__ import annotations

import pytest

from knowmeter.grading import JudgeReply, JudgeReplyError, parse_judge_reply


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"reasoning": "r", "score": 4, "reason": "ok"}', JudgeReply(score=4, reasoning="r", reason="ok")),
        (
            '```json\n{"reasoning": "r", "score": 5, "reason": "ok"}\n```',
            JudgeReply(score=5, reasoning="r", reason="ok"),
        ),
        (
            'Here is my grade:\n{"reasoning": "r", "score": 2, "reason": "weak"}\nHope this helps.',
            JudgeReply(score=2, reasoning="r", reason="weak"),
        ),
        (
            '{"reasoning": "the answer uses {braces} and \\"quotes\\" }}", "score": 3, "reason": "x"}',
            JudgeReply(score=3, reasoning='the answer uses {braces} and "quotes" }}', reason="x"),
        ),
        ('I considered {x} first. {"score": 1, "reason": "wrong"}', JudgeReply(score=1, reasoning="", reason="wrong")),
        (
            '{"meta": 1} then {"reasoning": "r", "score": 4}',
            JudgeReply(score=4, reasoning="r", reason=""),
        ),  # first object has no score
        ('{"score": 4.0, "reason": "integral float"}', JudgeReply(score=4, reasoning="", reason="integral float")),
        (
            '{"score": 3, "reasoning": ["step 1", "step 2"]}',
            JudgeReply(score=3, reasoning='["step 1", "step 2"]', reason=""),
        ),
        (
            '{"reasoning": "分析：答案正确", "score": 5, "reason": "完整"}',
            JudgeReply(score=5, reasoning="分析：答案正确", reason="完整"),
        ),
        (
            '{"broken": } {"score": 2}',
            JudgeReply(score=2, reasoning="", reason=""),
        ),  # broken JSON first, a good object after
    ],
)
def test_parses(text: str, expected: JudgeReply) -> None:
    assert parse_judge_reply(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("The answer deserves a 4.", "no JSON object with a score"),
        ('{"reasoning": "r", "score": 4', "no JSON object with a score"),  # truncated
        ("{'score': 4}", "no JSON object with a score"),  # not JSON
        ('{"reasoning": "r"}', "no JSON object with a score"),
        ('{"score": 0}', "outside 1–5"),
        ('{"score": 6}', "outside 1–5"),
        ('{"score": -1}', "outside 1–5"),
        ('{"score": 4.5}', "not an integer"),
        ('{"score": "4"}', "not a number"),
        ('{"score": true}', "not a number"),
        ('{"score": null}', "not a number"),
        ("", "no JSON object with a score"),
    ],
)
def test_rejects(text: str, fragment: str) -> None:
    with pytest.raises(JudgeReplyError, match=fragment):
        parse_judge_reply(text)


def test_injected_score_in_reasoning_string_is_not_the_score() -> None:
    text = '{"reasoning": "the answer says {\\"score\\": 5}", "score": 2, "reason": "x"}'
    assert parse_judge_reply(text).score == 2
