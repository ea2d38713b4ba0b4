"""Secrets kept out of everything knowmeter writes, by name *and by value*.

``scrub`` replaces, in any text about to be stored or shown:

- every value registered with ``remember`` (the values of secret-named options, ``-O`` pairs
  and nested ``env`` maps, found by ``remember_named``) and of every secret-named environment
  variable of this process (``API_KEY``, ``*_TOKEN``, …);
- the userinfo of a URL (``https://user:pass@host`` → ``https://[redacted]@host``);
- a bearer / basic credential (``Authorization: Bearer …``);
- the value of a secret-named ``key=value`` pair, ``--secret-option value`` or JSON
  ``"api_key": "…"`` entry (a command string, a URL query, a crash log's command line);
- a credential by its published shape, whatever it is called (``sk-ant-…``, ``sk-proj-…``,
  ``ghp_…``, ``github_pat_…``, ``xoxb-…``, ``AKIA…``, ``AIza…``, ``glpat-…``, ``hf_…``): an agent
  that echoes ``$GH_PAT`` or a key it found on disk.

Values shorter than ``MIN_SECRET_CHARS`` are not taken as secrets (``1``, ``true``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
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
_VALUE = rb"(?!-)[^\s\"'\\&;:,()\[\]{}<>]{1,4096}"
_WORDS_B = _WORDS.encode()
#: credentials by their providers' published shapes (an OpenAI / Anthropic ``sk-`` key holds a digit,
#: which kebab-case words such as ``task-…`` do not), each starting with one of ``_SHAPE_STARTS``
_SHAPES = (
    rb"sk-(?=[a-z_-]*\d)[\w-]{20,4096}|gh[pousr]_[a-z0-9]{30,255}|github_pat_\w{40,255}|xox[abposr]-[a-z0-9-]{10,255}"
    rb"|akia[0-9a-z]{16}|aiza[\w-]{35}|glpat-[\w-]{20,255}|hf_[a-z0-9]{30,255}"
)
_SHAPE_STARTS = (b"sk-", b"gh", b"xox", b"akia", b"aiza", b"glpat-", b"hf_")
# Every alternative starts at one of ``_TRIGGERS`` (``://``, a secret word, ``bearer``): the text
# is searched for those with ``bytes.find`` (fast), and the pattern is tried only there. Every
# repeat is bounded, so a megabyte line costs linear time. Only the value group (the last one of
# an alternative) is replaced.
_PATTERNS = re.compile(
    b"|".join(
        (
            rb"(?P<url>://)(?P<userinfo>[^\s/@\"'\\<>]{1,512})@",
            rb"(?P<scheme>\b(?:bearer|authorization:\s*basic)\s+)(?P<cred>[\w.~+/=-]{8,4096})",
            rb"(?P<json>(?:" + _WORDS_B + rb")[\w.-]{0,40}\"\s*:\s*\")(?P<jval>[^\"\\]{1,4096})(?=\")",
            rb"(?P<pair>(?:" + _WORDS_B + rb")[\w.-]{0,40}\s*=\s*|\b(?:key|pass)\s*=\s*)(?P<pval>" + _VALUE + rb")",
            rb"(?P<opt>(?:" + _WORDS_B + rb"|\bkey|\bpass)[\w.-]{0,40}\s+)(?P<oval>" + _VALUE + rb")",
            rb"(?<![\w-])(?P<shaped>" + _SHAPES + rb")(?![\w-])",
        )
    ),
    re.IGNORECASE,
)
_TRIGGERS: tuple[bytes, ...] = (b"://", b"bearer", b"api", b"access", b"token", b"secret", b"pass", b"credential")
_TRIGGERS += (b"auth", b"cookie", b"private", b"key", *_SHAPE_STARTS)
#: where the token an ``opt`` match is in starts: it is an option only when that token starts with -
_TOKEN_START = re.compile(rb"\S{0,60}$")
_REDACTED_B = REDACTED.encode()

_remembered: set[str] = set()
_known: re.Pattern[bytes] | None = None
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
    data = text.encode("utf-8", "surrogatepass")
    return [data[a:b].decode("utf-8", "surrogatepass") for _, a, b in _matches(data) if data[a:b] != _REDACTED_B]


def _matches(data: bytes) -> Iterator[tuple[re.Match[bytes], int, int]]:
    """Each pattern match in ``data`` (left to right, not overlapping) and its value's span."""
    low = data.lower()  # ASCII only: the same length, so positions carry over
    starts: set[int] = set()
    for trigger in _TRIGGERS:
        at = low.find(trigger)
        while at >= 0:
            starts.add(at)
            at = low.find(trigger, at + 1)
    done = 0
    for pos in sorted(starts):
        if pos < done:
            continue
        m = _PATTERNS.match(data, pos)
        kind = m.lastgroup if m is not None else None
        if m is None or kind is None or (kind == "oval" and not _is_option(m)):
            continue
        done = m.end()
        yield (m, *m.span(kind))


def _known_pattern() -> re.Pattern[bytes] | None:
    """One pattern of every remembered value and secret-named environment variable (made again
    when either set changes size: the environment is not read on every call)."""
    global _known, _known_for
    key = hash((len(_remembered), len(os.environ)))
    if key != _known_for:
        env = [  # a path (SSH_AUTH_SOCK, XAUTHORITY) is not a secret
            v for k, v in os.environ.items() if looks_secret(k) and len(v) >= MIN_SECRET_CHARS and not v.startswith("/")
        ]
        values = sorted(_remembered.union(env), key=len, reverse=True)
        _known = (
            re.compile(b"|".join(re.escape(v.encode("utf-8", "surrogatepass")) for v in values)) if values else None
        )
        _known_for = key
    return _known


def _is_option(m: re.Match[bytes]) -> bool:
    """Whether the word an ``opt`` match starts at is inside a ``-``-prefixed token (``--api-key``)."""
    token = _TOKEN_START.search(m.string, max(0, m.start() - 60), m.start())
    return token is not None and token.group(0).startswith(b"-")


def scrub(text: str) -> str:
    """``text`` with every secret (module docstring) replaced by ``REDACTED``."""
    data = text.encode("utf-8", "surrogatepass")
    out = scrub_bytes(data)
    return text if out is data else out.decode("utf-8", "surrogatepass")


def scrub_bytes(data: bytes) -> bytes:
    """``scrub`` for UTF-8 bytes (a JSON line about to be stored); ``data`` itself when it holds
    no secret."""
    known = _known_pattern()
    if known is not None and known.search(data):
        data = known.sub(_REDACTED_B, data)
    parts: list[bytes] = []
    last = 0
    for _, start, end in _matches(data):
        parts += (data[last:start], _REDACTED_B)
        last = end
    return data if not parts else b"".join([*parts, data[last:]])


def scrub_value(value: Any) -> Any:
    """``value`` (JSON-like) with ``scrub`` applied to every string in it; ``value`` itself when
    its JSON form holds no secret (the common case: one fast pass instead of one per string)."""
    if isinstance(value, dict | list):
        from knowmeter import jsonio

        try:
            probe = jsonio.dumps(value)
        except TypeError:
            probe = None
        if probe is not None and scrub_bytes(probe) is probe:
            return value
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v) for v in value]
    return value
