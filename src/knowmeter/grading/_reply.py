"""Parsing a judge's reply: the first balanced JSON object with a valid 1–5 integer score."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_MAX_REPLY_CHARS = 200_000


class JudgeReplyError(ValueError):
    """The judge's reply holds no usable ``{reasoning, score, reason}`` object."""


@dataclass(frozen=True, slots=True)
class JudgeReply:
    score: int
    reasoning: str
    reason: str


def _balanced_objects(text: str) -> Iterator[tuple[str, int]]:
    """Each balanced ``{…}`` span (braces inside JSON strings ignored) with its end index."""
    start = text.find("{")
    while start != -1:
        depth = 0
        in_string = escaped = False
        end = -1
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
        if end == -1:  # unbalanced from here: try the next opening brace
            start = text.find("{", start + 1)
            continue
        yield text[start:end], end
        start = text.find("{", start + 1)


def _score(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JudgeReplyError(f"score {value!r} is not a number")
    if isinstance(value, float) and not value.is_integer():
        raise JudgeReplyError(f"score {value!r} is not an integer")
    score = int(value)
    if not 1 <= score <= 5:
        raise JudgeReplyError(f"score {score} is outside 1–5")
    return score


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def json_objects(text: str) -> Iterator[Any]:
    """Each top-level JSON value written as a balanced ``{…}`` in ``text`` (code fences and prose
    around it tolerated; objects nested inside one already yielded are skipped)."""
    text = text[:_MAX_REPLY_CHARS]
    skip_until = 0
    for candidate, end in _balanced_objects(text):
        if end <= skip_until:  # nested inside an object already parsed
            continue
        try:
            obj = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        skip_until = end
        yield obj


def parse_judge_reply(text: str) -> JudgeReply:
    """The first JSON object in ``text`` that has a ``score`` key (code fences and prose around it
    are tolerated), validated: ``score`` must be an integer 1–5. Raises ``JudgeReplyError``."""
    for obj in json_objects(text):
        if isinstance(obj, dict) and "score" in obj:
            return JudgeReply(_score(obj["score"]), _text(obj.get("reasoning")), _text(obj.get("reason")))
    snippet = " ".join(text[:_MAX_REPLY_CHARS].split())[:120]
    raise JudgeReplyError(f"no JSON object with a score in the judge's reply: {snippet!r}")
