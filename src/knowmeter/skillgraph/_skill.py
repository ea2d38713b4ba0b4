"""SKILL.md → :class:`Skill`: the three frontmatter shapes (v4 / v6 / v8) read unchanged, the
concept fields normalised to one set of keys with their source line, the body cut into sections,
the v8 ``audit-state.json`` sidecar, and marketplace exports detected.

Where each concept field comes from (the first that has text wins, ``FORMATS.md`` §1):

* a flat top-level key (v6 ``mental_model``, ``purpose``, ``boundary``, ``analogy``,
  ``misconception``; v8 ``concept_boundary`` for ``boundary``) — the v6 contract says flat
  fields win over the nested block when both are present;
* the nested ``concept.<field>`` block (v4, and v6 back-compat);
* for ``definition`` in v6 / v8 only: ``description`` (v6: "definition is covered by
  description");
* the ``metadata`` map of a marketplace export (``metadata.mental_model``, … — the v8 exporter),
  or the JSON packed into ``metadata.metadata`` (the v0.5.6 exporter).

A field whose text is the literal ``"|"`` (the marketplace exporter's loss of every multi-line
field) is never used: its text is read from the body section ``## Concept of the skill`` — the
line labelled for the field (``**Mental model:** …``) when the section has such labels, else the
whole section — and the skill is flagged ``marketplace_export`` with the reason.

The shape: v8 when the file or its export ``metadata`` carries a v8 marker (``subject``,
``subjects``, ``public``, ``taxonomy_domain``, ``project``, ``concept_boundary``,
``relations.suppresses``, ``schema_version`` ≥ 8) or an ``audit-state.json`` lies beside it; v6
for flat understanding fields or ``schema_version`` 5–7; else v4. ``export`` names the
marketplace export format (``"v0.5.6"`` packed JSON, ``"v8"`` metadata map) or is ``None`` for a
source SKILL.md; ``archetype`` is ``type`` / ``archetype`` (v4 / v6; default ``capability``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from knowmeter._yaml import parse_yaml
from knowmeter.errors import InputError
from knowmeter.skillgraph._dimension import CONCEPT_FIELDS, ConceptField, Dimension
from knowmeter.skillgraph._errors import SkillFormatError
from knowmeter.skillgraph._markdown import Section, parse_sections, split_frontmatter
from knowmeter.skillgraph._paths import find_repo_root
from knowmeter.skillgraph._schema import schema_version_number

Shape = Literal["v4", "v6", "v8"]
AUDIT_STATE_FILE = "audit-state.json"
#: The understanding fields v6 flattened; ``comprehension_state: present`` requires them.
UNDERSTANDING_FIELDS: tuple[ConceptField, ...] = ("mental_model", "purpose", "boundary", "analogy", "misconception")
_FLAT_KEYS: dict[ConceptField, tuple[str, ...]] = {
    "definition": ("definition",),
    "mental_model": ("mental_model",),
    "purpose": ("purpose",),
    "boundary": ("concept_boundary", "boundary"),
    "taxonomy": ("taxonomy",),
    "analogy": ("analogy",),
    "misconception": ("misconception",),
}
_EXPORT_MARK = "|"
#: keys only the v8 frontmatter (or its export's metadata) has
_V8_MARKERS = ("subject", "subjects", "public", "taxonomy_domain", "project", "concept_boundary")
#: ``**Label:**`` lines of a ``## Concept of the skill`` section → the concept field they hold
_BODY_LABELS: dict[str, ConceptField] = {
    "what it is": "definition",
    "mental model": "mental_model",
    "why it exists": "purpose",
    "what it is not": "boundary",
    "adjacent concepts": "taxonomy",
    "one-line analogy": "analogy",
    "analogy": "analogy",
    "common misconception": "misconception",
}
CONCEPT_SECTION = "Concept of the skill"
ExportFormat = Literal["v0.5.6", "v8"]


@dataclass(frozen=True, slots=True)
class ConceptText:
    """One concept field's text, the frontmatter key it came from (``"concept.definition"``,
    ``"mental_model"``, ``"description"``, ``"metadata.metadata"``) and its file lines."""

    text: str
    key: str
    line: int | None
    end_line: int | None


@dataclass(frozen=True, slots=True)
class Skill:
    """One SKILL.md as its author wrote it, plus the normalised view the grader and lint use.

    ``frontmatter`` is the raw mapping; ``concept`` holds only the fields that have usable text
    (a missing field is absent, never ``""``); ``body`` is the text after the closing ``---``,
    starting at file line ``body_line``; ``audit_state`` is the parsed sibling
    ``audit-state.json`` (v8) or ``None``."""

    path: Path
    repo_root: Path
    name: str
    shape: Shape
    schema_version: int | str | None
    frontmatter: dict[str, Any]
    concept: dict[ConceptField, ConceptText]
    body: str
    body_line: int
    sections: tuple[Section, ...]
    audit_state: dict[str, Any] | None
    audit_state_path: Path | None
    marketplace_export: bool
    marketplace_reason: str | None
    key_lines: dict[str, int]
    export: ExportFormat | None = None
    archetype: str = "capability"
    #: fields the export holds as the literal '|' (their text, when any, came from the body)
    blank_fields: tuple[ConceptField, ...] = ()

    def section(self, title: str) -> Section | None:
        """The first body section with this heading (case-insensitive), or ``None``."""
        want = title.strip().lower()
        return next((s for s in self.sections if s.title.lower() == want), None)

    def anchor(self, slug: str) -> Section | None:
        """The first section whose heading answers to the anchor ``slug``, or ``None``."""
        return next((s for s in self.sections if slug in s.anchors), None)

    def concept_text(self, field: ConceptField) -> str | None:
        """The text of one concept field, or ``None`` when the skill has none usable."""
        value = self.concept.get(field)
        return value.text if value is not None else None

    def grading_text(self, dimension: Dimension) -> str | None:
        """What ``dimension`` grades against: the concept field (C1–C7) or the body section
        (C8 ``## Verification``, C9 ``## Do NOT Use When``); ``None`` when the skill lacks it."""
        if dimension.concept_field is not None:
            return self.concept_text(dimension.concept_field)
        assert dimension.section is not None
        sec = self.section(dimension.section)
        return sec.text if sec is not None and sec.text.strip() else None

    @property
    def comprehension_state(self) -> str | None:
        """``comprehension_state`` from the frontmatter, its ``eval`` alias, or (v8) the
        sidecar; ``None`` when none of them says."""
        for source in (self.frontmatter, self.frontmatter.get("eval"), self.audit_state):
            if isinstance(source, dict) and isinstance(source.get("comprehension_state"), str):
                return str(source["comprehension_state"])
        return None


def load_skill(path: Path) -> Skill:
    """Read a SKILL.md (or a folder holding one). Raises :class:`SkillFormatError` (one line:
    file, line, fix) for a missing file, no / unclosed frontmatter, YAML errors, a frontmatter
    that is not a mapping, a missing ``name``, a concept field that is not text, or an
    ``audit-state.json`` that is not a JSON object."""
    path = Path(path)
    if path.is_dir():
        path = path / "SKILL.md"
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark in front is not part of the text
    except FileNotFoundError:
        raise SkillFormatError(path, "file not found; pass a SKILL.md or the folder that holds one") from None
    except UnicodeDecodeError as exc:
        raise SkillFormatError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    split = split_frontmatter(text, path)
    # pad so YAML error marks and node lines are file lines
    padded = "\n" * (split.frontmatter_line - 1) + split.frontmatter
    try:
        data = parse_yaml(padded, path)
    except InputError as exc:  # one line naming the file line; re-raised as this package's error type
        raise SkillFormatError(path, str(exc).removeprefix(f"{path}: ")) from None
    if not isinstance(data, dict):
        raise SkillFormatError(path, "the frontmatter must be a mapping of fields (key: value)", line=2)
    key_lines = _key_lines(padded)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        if name is None or isinstance(name, str):
            raise SkillFormatError(path, "frontmatter has no 'name'; add name: <skill-name>", line=2)
        raise SkillFormatError(  # YAML read 42, 2026-01-01 or [a, b]: not a name
            path,
            f'must be text, got {type(name).__name__} ({name!s}); quote it: name: "<skill-name>"',
            line=key_lines.get("name"),
            field="name",
        )
    audit_path = path.parent / AUDIT_STATE_FILE
    audit = read_audit_state(audit_path) if audit_path.is_file() else None
    export = _export_format(data)
    sections = parse_sections(split.body, split.body_line)
    concept, exported = _concept_fields(data, key_lines, path)
    shape = _shape(data, audit is not None)
    if shape != "v4" and "definition" not in concept and isinstance(data.get("description"), str):
        desc = data["description"].strip()
        if desc and desc != _EXPORT_MARK:
            line = key_lines.get("description")
            concept["definition"] = ConceptText(desc, "description", line, line)
    reason = None
    if exported:
        from_body = _body_concept(sections, exported)
        concept.update(from_body)
        missing = [f for f in exported if f not in from_body]
        reason = (
            f"marketplace export: {', '.join(exported)} hold the literal '|' (the exporter drops multi-line fields); "
            + (
                f"read from the body section '## {CONCEPT_SECTION}' instead"
                if not missing
                else f"there is no '## {CONCEPT_SECTION}' section to read them from: grade the source SKILL.md"
            )
        )
    kind = data.get("type", data.get("archetype")) or _packed(data).get("type") or "capability"
    return Skill(
        path=path,
        repo_root=find_repo_root(path),
        name=name.strip(),
        shape=shape,
        schema_version=data.get("schema_version"),
        frontmatter=data,
        concept=concept,
        body=split.body,
        body_line=split.body_line,
        sections=sections,
        audit_state=audit,
        audit_state_path=audit_path if audit is not None else None,
        marketplace_export=bool(exported),
        marketplace_reason=reason,
        key_lines=key_lines,
        export=export,
        archetype=str(kind),
        blank_fields=tuple(exported),
    )


def _shape(data: dict[str, Any], has_sidecar: bool) -> Shape:
    meta = data.get("metadata")
    exported = meta if isinstance(meta, dict) else {}
    packed = _packed(data)
    version = data.get("schema_version", packed.get("schema_version"))
    number = schema_version_number(version)
    relations = data.get("relations")
    suppresses = isinstance(relations, dict) and "suppresses" in relations
    marked = any(k in data or k in exported for k in _V8_MARKERS)
    if marked or suppresses or has_sidecar or (number is not None and number >= 8):
        return "v8"
    flat = any(field in data or field in packed for field in UNDERSTANDING_FIELDS)
    if flat or (number is not None and 5 <= number <= 7):
        return "v6"
    return "v4"


def _export_format(data: dict[str, Any]) -> ExportFormat | None:
    """Which marketplace exporter wrote the file: v0.5.6 packs the protocol into the JSON string
    ``metadata.metadata``; the v8 exporter writes a ``metadata`` map of strings with the v8 keys."""
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        return None
    if isinstance(meta.get("metadata"), str):
        return "v0.5.6"
    if any(k in meta for k in _V8_MARKERS) or any(str(k).startswith("skill_graph_") for k in meta):
        return "v8"
    return None


def _body_concept(sections: tuple[Section, ...], fields: list[ConceptField]) -> dict[ConceptField, ConceptText]:
    """``fields`` read from the body's ``## Concept of the skill``: the labelled line of each
    (``**Mental model:** …``), else — a section without labels — the whole section for each."""
    sec = next((s for s in sections if s.level == 2 and s.title.lower() == CONCEPT_SECTION.lower()), None)
    if sec is None or not sec.text.strip():
        return {}
    labelled: dict[ConceptField, str] = {}
    for line in sec.text.splitlines():
        match = re.match(r"\s*\*\*([^*:]+):\*\*\s*(.+)", line)
        if match and match.group(1).strip().lower() in _BODY_LABELS:
            labelled.setdefault(_BODY_LABELS[match.group(1).strip().lower()], match.group(2).strip())
    key = f"## {CONCEPT_SECTION}"
    out: dict[ConceptField, ConceptText] = {}
    for field in fields:
        text = labelled.get(field) if labelled else sec.text.strip()
        if text:
            out[field] = ConceptText(text, key, sec.line, sec.end_line)
    return out


def _concept_fields(
    data: dict[str, Any], key_lines: dict[str, int], path: Path
) -> tuple[dict[ConceptField, ConceptText], list[ConceptField]]:
    """The usable concept fields and the names of those exported as the literal '|'."""
    nested = data.get("concept")
    packed = _packed_metadata(data)
    meta = data.get("metadata")
    mapped = meta if isinstance(meta, dict) else {}
    out: dict[ConceptField, ConceptText] = {}
    exported: list[ConceptField] = []
    for field in CONCEPT_FIELDS:
        candidates: list[tuple[str, Any]] = [(key, data.get(key)) for key in _FLAT_KEYS[field]]
        if isinstance(nested, dict):
            candidates.append((f"concept.{field}", nested.get(field)))
        candidates += [(f"metadata.{key}", mapped.get(key)) for key in _FLAT_KEYS[field]]
        candidates += [(f"metadata.metadata {key}", value) for key, value in packed.get(field, [])]
        for key, value in candidates:
            if value is None:
                continue
            if not isinstance(value, str):
                raise SkillFormatError(
                    path,
                    f"must be text (a string or a '|' block), got {type(value).__name__}",
                    line=key_lines.get(key),
                    field=key,
                )
            if value.strip() == _EXPORT_MARK:
                if field not in exported:
                    exported.append(field)
                continue
            if value.strip() and field not in out:
                line = key_lines.get(key)
                out[field] = ConceptText(value.strip(), key, line, key_lines.get(f"{key}$end", line))
    return out, [f for f in exported if f not in out]


def _packed(data: dict[str, Any]) -> dict[str, Any]:
    """The protocol fields a v0.5.6 marketplace export packed as JSON into ``metadata.metadata``."""
    meta = data.get("metadata")
    raw = meta.get("metadata") if isinstance(meta, dict) else None
    if not isinstance(raw, str):
        return {}
    try:
        packed = json.loads(raw)
    except json.JSONDecodeError:
        return {}
    return packed if isinstance(packed, dict) else {}


def _packed_metadata(data: dict[str, Any]) -> dict[str, list[tuple[str, Any]]]:
    """Concept fields packed as JSON into ``metadata.metadata`` (v0.5.6 marketplace exports)."""
    packed = _packed(data)
    if not packed:
        return {}
    concept = packed.get("concept")
    if isinstance(concept, str):
        try:
            concept = json.loads(concept)
        except json.JSONDecodeError:
            concept = None
    out: dict[str, list[tuple[str, Any]]] = {}
    for field in CONCEPT_FIELDS:
        for key in _FLAT_KEYS[field]:
            if key in packed:
                out.setdefault(field, []).append((key, packed[key]))
        if isinstance(concept, dict) and field in concept:
            out.setdefault(field, []).append((f"concept.{field}", concept[field]))
    return out


def _key_lines(padded: str) -> dict[str, int]:
    """1-based file line of each top-level key and each ``concept.<key>``; ``<key>$end`` is the
    last line of that key's value. Only called after the text parsed, so it cannot fail."""
    import yaml

    root = yaml.compose(padded, Loader=yaml.SafeLoader)
    out: dict[str, int] = {}
    if not isinstance(root, yaml.MappingNode):
        return out

    def visit(node: yaml.MappingNode, prefix: str) -> None:
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = prefix + str(key_node.value)
            out[key] = key_node.start_mark.line + 1
            end = value_node.end_mark
            out[f"{key}$end"] = end.line if end.column == 0 else end.line + 1
            if prefix == "" and key == "concept" and isinstance(value_node, yaml.MappingNode):
                visit(value_node, "concept.")

    visit(root, "")
    return out


def read_audit_state(path: Path, *, unique_keys: bool = False) -> dict[str, Any]:
    """The parsed ``audit-state.json`` at ``path`` as Skill Graph's ``JSON.parse`` reads it (a
    byte-order mark in front allowed): ``SkillFormatError`` (one line) for invalid JSON — ``NaN``
    and ``Infinity`` included, and a number past a float's range, which would be written back as
    ``Infinity`` —, non-UTF-8 text, nesting too deep, or anything but an object. ``unique_keys``
    (a file about to be rewritten): a key twice in one object, which the rewrite would drop, too."""
    try:
        data = json.loads(
            path.read_text(encoding="utf-8-sig"),
            parse_constant=_not_json,
            parse_float=_finite,
            object_pairs_hook=_unique_object if unique_keys else None,
        )
    except json.JSONDecodeError as exc:
        raise SkillFormatError(path, f"invalid JSON ({exc.msg}), column {exc.colno}", line=exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise SkillFormatError(path, f"not UTF-8 text ({exc.reason}); save it as UTF-8") from None
    except (RecursionError, ValueError) as exc:  # nested too deeply, NaN, a number past the digit limit
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
        raise SkillFormatError(path, f"cannot read the JSON ({what}); fix the file") from None
    if not isinstance(data, dict):
        raise SkillFormatError(path, "audit-state.json must be a JSON object (the v8 sidecar)", line=1)
    return data


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number: write a number or null")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:24]} is past the range of a float: write a smaller one")
    return value


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    twice = next((key for i, key in enumerate(keys) if key in keys[:i]), None)
    if twice is not None:
        raise ValueError(f"the key {twice!r} appears twice in one object (Skill Graph reads the last): keep one")
    return dict(pairs)
