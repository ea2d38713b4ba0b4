"""The judge's reply: ``{reasoning, score, reason}`` with an integer score 1–5 (a pydantic model
read through ``knowmeter.ask.json_reply``: the first JSON object holding a ``score``)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from knowmeter.ask import ReplyRejected, json_reply


class JudgeReplyError(ReplyRejected):
    """The judge's reply holds no usable ``{reasoning, score, reason}`` object."""


class JudgeReply(BaseModel):
    """A validated judge reply (other keys are ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    score: int
    reasoning: str = ""
    reason: str = ""

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"score {value!r} is not a number")
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"score {value!r} is not an integer")
        score = int(value)
        if not 1 <= score <= 5:
            raise ValueError(f"score {score} is outside 1–5")
        return score

    @field_validator("reasoning", "reason", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        if value is None:
            return ""
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


#: The first JSON object in a reply that has a ``score`` key, validated; raises ``JudgeReplyError``.
parse_judge_reply = json_reply(JudgeReply, "score", needs="a score", what="judge", error=JudgeReplyError)
