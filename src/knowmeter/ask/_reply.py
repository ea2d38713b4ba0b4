"""Reading a model's structured reply: the first JSON object of the expected shape in its text
(code fences and prose around it tolerated), validated by a pydantic model of the reply."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

_MAX_REPLY_CHARS = 200_000
_SNIPPET = 120

M = TypeVar("M", bound=BaseModel)


class ReplyRejected(ValueError):
    """A model's reply is unusable: no JSON object of the expected shape, or one that breaks the
    reply's rules (the message says which). Triggers the one re-ask."""


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


def snippet(text: str) -> str:
    """The start of ``text`` with whitespace runs as one space, quoted (for error messages)."""
    return repr(" ".join(text[:_MAX_REPLY_CHARS].split())[:_SNIPPET])


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    ctx = err.get("ctx") or {}
    msg = str(ctx["error"]) if err["type"] == "value_error" and "error" in ctx else err["msg"]
    where = ".".join(str(p) for p in err["loc"])
    return msg if not where or where in msg else f"{where}: {msg}"


def json_reply(
    model: type[M],
    key: str,
    *,
    needs: str | None = None,
    what: str = "model",
    error: type[ReplyRejected] = ReplyRejected,
) -> Callable[[str], M]:
    """A parser for replies shaped as ``model``: the first JSON object in the text that holds
    ``key``, validated by ``model``; raises ``error`` naming why when there is none or it is
    invalid (``needs`` names the key in that message, ``what`` the model asked)."""

    def parse(text: str) -> M:
        for obj in json_objects(text):
            if isinstance(obj, dict) and key in obj:
                try:
                    return model.model_validate(obj)
                except ValidationError as exc:
                    raise error(_first_error(exc)) from None
        raise error(f"no JSON object with {needs or repr(key)} in the {what}'s reply: {snippet(text)}")

    return parse
