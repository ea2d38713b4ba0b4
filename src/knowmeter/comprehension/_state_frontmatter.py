"""``--write-state`` for a v4 / v5 / v6 skill without an ``audit-state.json``: the eval receipt
goes into the SKILL.md frontmatter, limited to the fields that skill's schema has (Skill Graph's
``skill.v<N>.schema.json``, each ``additionalProperties: false``): v4 and v5 ``eval_last_run``;
v6 (and v7) also ``eval_score`` and ``eval_failed_ids``; v3 and older none (their schemas have no
eval receipt, so the write is refused before anything runs). Neither schema has a field for the
comprehension verdict: its level is the report's, reached through ``eval_last_run.receipt``;
``eval_last_run.status`` says pass / fail / mixed.

A key the frontmatter already has is rewritten where it stands (its value lines replaced, the
comment lines after it kept); a new key goes at the end of the frontmatter. Every other byte —
the other keys in their order, comments, a byte-order mark, each line's own line ending (CRLF
stays CRLF), the body — is kept. Values are written as JSON flow mappings, which YAML reads as
the same strings (a quoted ``at`` never turns into a YAML timestamp). The file is rewritten
atomically.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from knowmeter._secrets import scrub_value
from knowmeter.comprehension._state import json_text
from knowmeter.errors import InputError
from knowmeter.skillgraph import Skill, schema_version_number, versioned_frontmatter_problems
from knowmeter.store import atomic_file

#: the eval fields each frontmatter ``schema_version``'s schema declares (v0.5.6 and its history)
_BY_VERSION: dict[int, tuple[str, ...]] = {
    4: ("eval_last_run",),
    5: ("eval_last_run",),
    6: ("eval_score", "eval_failed_ids", "eval_last_run"),
    7: ("eval_score", "eval_failed_ids", "eval_last_run"),
}
#: without a readable ``schema_version``: by the shape the fields show
_BY_SHAPE: dict[str, tuple[str, ...]] = {"v4": _BY_VERSION[4], "v6": _BY_VERSION[6]}
_LINE_END = re.compile(r"\r\n|\r|\n")
#: values of the shape --write-state writes, to ask the repository's schema before a run
_SAMPLE: dict[str, Any] = {
    "eval_score": 0.0,
    "eval_failed_ids": [],
    "eval_last_run": {"at": "2026-01-01T00:00:00Z", "status": "mixed", "runner": "knowmeter"},
}


def frontmatter_fields(skill: Skill) -> tuple[str, ...]:
    """The eval fields ``skill``'s frontmatter schema has room for (empty: none, e.g. v3)."""
    number = schema_version_number(skill.schema_version)
    if number is None:
        return _BY_SHAPE.get(skill.shape, ())
    return () if number < 4 else _BY_VERSION.get(number, ())


def frontmatter_refusal(skill: Skill) -> str | None:
    """Why ``--write-state`` cannot record a run in this SKILL.md's frontmatter (checked before
    anything runs), or ``None`` when it can."""
    if not frontmatter_fields(skill):
        return (
            f"schema_version {skill.schema_version} frontmatter has no field for an eval receipt (Skill Graph's "
            "schema for it allows no eval_last_run); migrate the skill to schema_version 4 or later, add an "
            "audit-state.json beside it, or run without --write-state"
        )
    sample = {k: v for k, v in _SAMPLE.items() if k in frontmatter_fields(skill)}
    caused = _caused(skill, sample)
    if caused:
        return f"{caused}; the repository's schema for it has no room for the eval receipt: run without --write-state"
    if _root_is_flow(skill):
        return (
            "the frontmatter is one flow mapping ({...}); --write-state edits block-style frontmatter "
            "(one 'key: value' per line): rewrite it so, or run without --write-state"
        )
    return None


def frontmatter_update(skill: Skill, update: dict[str, Any]) -> dict[str, Any]:
    """The part of a sidecar ``update`` the skill's frontmatter schema can hold."""
    fields = frontmatter_fields(skill)
    return {k: v for k, v in update.items() if k in fields}


def write_frontmatter_state(skill: Skill, update: dict[str, Any]) -> dict[str, Any]:
    """Set ``update``'s keys (top-level frontmatter keys) in the SKILL.md; returns their previous
    values. ``InputError``, nothing written, when the repository's schema for the skill's
    ``schema_version`` (``schemas/skill.v<N>.schema.json``) rejects the values written. The values
    are scrubbed of secrets; the author's text is written back as it was."""
    update = scrub_value(update)
    caused = _caused(skill, update)
    if caused:
        raise InputError(f"{skill.path}: not written: {caused}; run without --write-state")
    raw = skill.path.read_bytes()
    bom = codecs.BOM_UTF8 if raw.startswith(codecs.BOM_UTF8) else b""
    text = raw[len(bom) :].decode("utf-8")
    start, close = _frontmatter_span(text)
    front = text[start:close]
    first_end = _LINE_END.search(text)
    newline = first_end.group(0) if first_end else "\n"
    spans = _key_spans(front)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in ``front``
    appended: list[str] = []
    for key, value in update.items():
        line = f"{key}: {json_text(value, ensure_ascii=False)}"
        if key in spans:
            begin, end, ending = spans[key]
            edits.append((begin, end, line + (ending or newline)))
        else:
            appended.append(line + newline)
    for begin, end, replacement in sorted(edits, reverse=True):
        front = front[:begin] + replacement + front[end:]
    if appended and front and not front.endswith(("\n", "\r")):
        front += newline
    new = text[:start] + front + "".join(appended) + text[close:]
    before = {k: skill.frontmatter.get(k) for k in update}
    with atomic_file(skill.path.resolve(), scrub=False) as fh:  # a symlinked SKILL.md stays a link
        fh.write(bom + new.encode("utf-8"))
    return before


def _caused(skill: Skill, update: dict[str, Any]) -> str | None:
    """What the repository's schema for the skill's ``schema_version`` (when it has one) says
    against ``update``'s keys set in the frontmatter; ``None`` when nothing."""
    merged = {**skill.frontmatter, **update}
    problems = versioned_frontmatter_problems(merged, skill.repo_root) or []
    caused = [p.message for p in problems if p.field.split(".")[0] in update]
    return caused[0] if caused else None


def _frontmatter_span(text: str) -> tuple[int, int]:
    """Character offsets of the frontmatter text: after the opening ``---`` line, up to the start
    of the closing one (``load_skill`` has checked both exist)."""
    lines = _lines(text)
    begin = lines[0][1]
    for line_start, line_end in lines[1:]:
        if text[line_start:line_end].strip() == "---":
            return begin, line_start
    raise ValueError("frontmatter is not closed")  # load_skill refuses such a file first


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end-after-line-break) of each line, a line break being CRLF, CR or LF (YAML's)."""
    out: list[tuple[int, int]] = []
    pos = 0
    for match in _LINE_END.finditer(text):
        out.append((pos, match.end()))
        pos = match.end()
    if pos < len(text):
        out.append((pos, len(text)))
    return out


def _key_spans(front: str) -> dict[str, tuple[int, int, str]]:
    """Each top-level key of ``front``: the span from the start of its line to the end of the last
    line holding its value (comment lines after the value are not part of it), and that line's
    line break."""
    import yaml

    root = yaml.compose(front, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        return {}
    lines = _lines(front)
    out: dict[str, tuple[int, int, str]] = {}
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        last = max(key_node.end_mark.index, _content_end(value_node)) - 1
        while last > key_node.start_mark.index and front[last] in " \t\r\n":
            last -= 1
        first = next(s for s, e in lines if s <= key_node.start_mark.index < e)
        end = next(e for s, e in lines if s <= last < e)
        tail = front[max(end - 2, first) : end]
        ending = "\r\n" if tail.endswith("\r\n") else tail[-1:] if tail.endswith(("\n", "\r")) else ""
        out[str(key_node.value)] = (first, end, ending)
    return out


def _content_end(node: Any) -> int:
    """Offset just past the last character of ``node``'s own content (a block collection's
    ``end_mark`` lies at the next key, past any comment lines between)."""
    import yaml

    if isinstance(node, yaml.ScalarNode) or node.flow_style:
        return int(node.end_mark.index)
    children: list[Any] = (
        [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else list(node.value)
    )
    return max((_content_end(c) for c in children), default=int(node.start_mark.index))


def _root_is_flow(skill: Skill) -> bool:
    import yaml

    text = skill.path.read_text(encoding="utf-8-sig")
    start, close = _frontmatter_span(text)
    root = yaml.compose(text[start:close], Loader=yaml.SafeLoader)
    return isinstance(root, yaml.MappingNode) and bool(root.flow_style)
