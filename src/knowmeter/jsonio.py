"""Fast, strict JSON for the records a run writes and reads (orjson underneath).

Written JSON is compact and strictly valid: a NaN or infinite number is written as ``null``
(unknown), never as the non-standard ``NaN`` token. Reading also accepts files written by other
tools with such tokens (the standard library parses them); a lone surrogate escape is read as
U+FFFD, the replacement character.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def _other(value: Any) -> Any:
    if isinstance(value, float):  # a float subclass orjson does not take as is
        return float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: Any, *, indent: bool = False) -> bytes:
    """UTF-8 JSON of ``value``: compact, or indented by two spaces."""
    return orjson.dumps(value, default=_other, option=_OPTIONS | orjson.OPT_INDENT_2 if indent else _OPTIONS)


def loads(data: bytes | str) -> Any:
    """Parse one JSON document; raises ``ValueError`` (``json.JSONDecodeError``) when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        # NaN / Infinity tokens, lone surrogate escapes, or the standard library's error message
        return without_lone_surrogates(json.loads(data))
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate (``"\\ud800"`` not part of a pair; not text, and not
    writable as UTF-8) replaced by U+FFFD, as a decoder replaces a broken byte."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value


def shown(value: Any, limit: int = 40) -> str:
    """``value`` as JSON for a message (``NaN`` as it is), cut to ``limit`` characters with "…"."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
