"""Fast, strict JSON for the records a run writes and reads (orjson underneath).

Written JSON is compact and strictly valid: a NaN or infinite number is written as ``null``
(unknown), never as the non-standard ``NaN`` token. Reading also accepts files written by other
tools with such tokens (the standard library parses them).
"""

from __future__ import annotations

import json
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
        return json.loads(data)  # NaN / Infinity tokens, or the standard library's error message
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
