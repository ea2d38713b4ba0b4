"""Prompts with untrusted text fenced as data: versioned, hashed templates.

Every prompt knowmeter sends to a model for a structured reply is a ``PromptTemplate``: a version
string, a system prompt and a body with ``$placeholders``. Its ``hash`` is the first 12 hex digits
of sha256(version + system + body), recorded in every result and report.

Untrusted text (a task, its context, an agent's answer or passage, a draft) is inserted only
inside data blocks::

    <<<BEGIN ANSWER 3f9c…>>>
    …
    <<<END ANSWER 3f9c…>>>

The marker carries a nonce derived from the hash of all the data in the prompt, so text inside a
block cannot contain its own closing marker (it would have to contain a hash of itself); the
instructions name the nonce and say that nothing inside a block is an instruction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from string import Template


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A versioned prompt. ``blocks`` are the data-block placeholders, in order."""

    name: str
    version: str
    system: str
    body: str
    blocks: tuple[str, ...]

    @property
    def hash(self) -> str:
        """sha256(version + system + body), first 12 hex."""
        return hashlib.sha256((self.version + self.system + self.body).encode()).hexdigest()[:12]

    def render(
        self, data: Mapping[str, str], *, rubric: str | None = None, fields: Mapping[str, str] | None = None
    ) -> str:
        """The prompt with every block of ``data`` fenced and ``rubric`` and ``fields`` (trusted
        text knowmeter wrote, by placeholder name) inserted as they are."""
        missing = set(self.blocks) - set(data)
        if missing:
            raise KeyError(f"prompt {self.name!r} needs data blocks: {', '.join(sorted(missing))}")
        nonce = data_nonce([data[b] for b in self.blocks])
        values = {b.lower(): fence(b, data[b], nonce) for b in self.blocks}
        values["nonce"] = nonce
        if "$rubric" in self.body:
            values["rubric"] = rubric or ""
        values.update(fields or {})
        return Template(self.body).substitute(values)


def data_nonce(parts: list[str]) -> str:
    """16 hex digits from the hash of all data parts, re-hashed until no part contains it."""
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()
    while any(digest[:16] in p for p in parts):
        digest = hashlib.sha256(digest.encode()).hexdigest()
    return digest[:16]


def fence(name: str, text: str, nonce: str) -> str:
    """``text`` inside a data block."""
    return f"<<<BEGIN {name} {nonce}>>>\n{text}\n<<<END {name} {nonce}>>>"
