"""Secrets kept out of everything knowmeter writes, by name *and by value*.

``scrub`` replaces, in any text about to be stored or shown:

- every value registered with ``remember`` (the values of secret-named options, ``-O`` pairs
  and nested ``env`` maps, found by ``remember_named``) and of every secret-named environment
  variable of this process (``API_KEY``, ``*_TOKEN``, …);
- the userinfo of a URL (``https://user:pass@host`` → ``https://[redacted]@host``);
- a bearer / basic credential (``Authorization: Bearer …``);
- the value of a secret-named ``key=value`` pair, ``--secret-option value`` or JSON
  ``"api_key": "…"`` entry (a command string, a URL query, a crash log's command line).

Values shorter than ``MIN_SECRET_CHARS`` are not taken as secrets (``1``, ``true``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
#: a remembered value or environment variable shorter than this is not treated as a secret
MIN_SECRET_CHARS = 6

_WORDS = (
    r"api[-_]?key|access[-_]?key|token(?!s)|secret|passw(?:or)?d|passphrase|credential|auth(?!or(?!i))"
    r"|cookie|bearer|private[-_]?key"
)
#: Option / variable names that hold secrets.
SECRET_NAME = re.compile(rf"(?i){_WORDS}|(?:^|[-_])key$|^env$|^pass$")
# a secret-looking name inside a longer text; every repeat is bounded so that a megabyte of text
# without spaces costs linear time, not quadratic
_LONG_NAME = rf"[\w.-]{{0,40}}?(?:{_WORDS})[\w.-]{{0,40}}"
_VALUE = r"(?!-)[^\s\"'\\&;:,()\[\]{}<>]{1,4096}"
_PATTERNS = re.compile(
    "|".join(
        (
            r"(?P<url>\b[a-z][a-z0-9+.-]{0,30}://)(?P<userinfo>[^\s/@\"'\\<>]{1,512})@",
            r"(?P<scheme>\b(?:bearer|authorization:\s*basic)\s+)(?P<cred>[\w.~+/=-]{8,4096})",
            rf"(?P<json>\"{_LONG_NAME}\"\s*:\s*\")(?P<jval>[^\"\\]{{1,4096}})(?=\")",
            rf"(?P<opt>(?<![\w-])--?(?:{_LONG_NAME}|key|pass)(?:\s*=\s*|\s+))(?P<oval>{_VALUE})",
            rf"(?P<pair>(?<![\w.-])(?:{_LONG_NAME}|key|pass)\s*=\s*)(?P<pval>{_VALUE})",
        )
    ),
    re.IGNORECASE,
)

_remembered: set[str] = set()
_known: re.Pattern[str] | None = None
_known_for: int = -1


def looks_secret(name: object) -> bool:
    """Whether an option / variable called ``name`` holds a secret."""
    return isinstance(name, str) and SECRET_NAME.search(name) is not None


def remember(values: Iterable[str]) -> None:
    """Treat each of ``values`` (long enough) as a secret wherever it appears from now on."""
    for value in values:
        if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS and "redacted" not in value:
            _remembered.add(value)
            escaped = json.dumps(value)[1:-1]  # as it appears inside a JSON string
            if escaped != value:
                _remembered.add(escaped)


def remember_named(value: Any) -> None:
    """Remember every string under a secret-named key of ``value`` (a config or options mapping,
    walked through lists and nested mappings), and every secret a text pattern finds in its strings
    (a ``--token X`` inside a command string)."""
    remember(_named_values(value, secret=False))


def _named_values(value: Any, *, secret: bool) -> Iterable[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _named_values(v, secret=secret or looks_secret(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _named_values(v, secret=secret)
    elif isinstance(value, str):
        if secret:
            yield value
        else:
            yield from found_in(value)


def found_in(text: str) -> list[str]:
    """The secret values the text patterns find in ``text`` (URL userinfo, ``--token X``, …)."""
    out = []
    for m in _PATTERNS.finditer(text):
        kind = m.lastgroup
        if kind is not None and m.group(kind) != REDACTED:
            out.append(m.group(kind))
    return out


def _known_pattern() -> re.Pattern[str] | None:
    global _known, _known_for
    env = [  # a path (SSH_AUTH_SOCK, XAUTHORITY) is not a secret
        v for k, v in os.environ.items() if looks_secret(k) and len(v) >= MIN_SECRET_CHARS and not v.startswith("/")
    ]
    key = hash((len(_remembered), *sorted(env)))
    if key != _known_for:
        values = sorted(_remembered.union(env), key=len, reverse=True)
        _known = re.compile("|".join(re.escape(v) for v in values)) if values else None
        _known_for = key
    return _known


def _replace(m: re.Match[str]) -> str:
    """The match with its value group (the last one that matched) replaced by ``REDACTED``."""
    kind = m.lastgroup
    if kind is None:  # pragma: no cover - every alternative ends in a named group
        return m.group(0)
    start, end = (i - m.start() for i in m.span(kind))
    text = m.group(0)
    return text[:start] + REDACTED + text[end:]


def scrub(text: str) -> str:
    """``text`` with every secret (module docstring) replaced by ``REDACTED``."""
    known = _known_pattern()
    if known is not None:
        text = known.sub(REDACTED, text)
    return _PATTERNS.sub(_replace, text)


def scrub_bytes(data: bytes) -> bytes:
    """``scrub`` for UTF-8 bytes (a JSON line about to be stored)."""
    text = data.decode("utf-8", "surrogateescape")
    out = scrub(text)
    return data if out == text else out.encode("utf-8", "surrogateescape")


def scrub_value(value: Any) -> Any:
    """``value`` (JSON-like) with ``scrub`` applied to every string in it."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v) for v in value]
    return value
