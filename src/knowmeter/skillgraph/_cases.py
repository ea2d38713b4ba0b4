"""Eval files → :class:`CaseFile` of :class:`ComprehensionCase`, from the three formats Skill Graph
authors have (``FORMATS.md`` §2), auto-detected:

* ``"examples-evals"`` — ``examples/evals/<skill>.json``: ``truth_sources`` on every case, with or
  without the research's C-extensions (``comprehension_dimension``, ``concept_field``,
  ``transfer``, ``expected_behaviors[]`` of ``{id, kind, description}``, ``expected_reasoning``).
  Detected by ``truth_sources`` / C-extensions / ``grounding_note`` / ``truth_source_convention``.
* ``"comprehension-json"`` — ``skills/<name>/evals/comprehension.json``: no answer key but
  ``negative_expectation`` and, in hand-authored files, ``expected_elements[]`` (kept and used).
* ``"evals-json"`` — ``skills/<name>/evals/evals.json``: ``expectations[]`` (strings, turned into
  positive expected behaviors ``expectation-1``…), ``expected_output``; no ``dimension`` (the
  case's ``dimension`` is then ``None``), ``skill_name`` defaults to the skill folder's name.

Every enum goes through one table (:mod:`knowmeter.skillgraph._dimension`); an unknown value, a
missing required field or a wrong type raises :class:`SkillFormatError` naming file:line, case id,
field and the accepted values. Keys knowmeter does not model stay in ``extra``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from knowmeter.jsonio import without_lone_surrogates
from knowmeter.skillgraph._dimension import (
    CONCEPT_FIELDS,
    LEGACY_DIMENSIONS,
    METADATA_VALUES,
    BehaviorKind,
    ConceptField,
    Dimension,
    Transfer,
)
from knowmeter.skillgraph._errors import SkillFormatError
from knowmeter.skillgraph._paths import find_repo_root
from knowmeter.skillgraph._truth import TRUTH_SOURCE_FORMS, TruthSource

CaseFormat = Literal["examples-evals", "comprehension-json", "evals-json"]
ROUTING_SUFFIX = ".routing.json"
#: ``comprehend --calibrate``'s anchor answers beside an eval file (not an eval file)
ANCHORS_SUFFIX = ".anchors.json"
ROUTING_NOTE = (
    "a Skill Graph routing eval (routing_cases: which skill a query should activate) — input of the skill "
    "activation evaluation, not a comprehension eval: skill lint does not check it and comprehend does not run it"
)

_EXTENSIONS = ("comprehension_dimension", "concept_field", "transfer", "expected_behaviors")
_CASE_KEYS = frozenset(
    {
        "id",
        "prompt",
        "dimension",
        "comprehension_dimension",
        "concept_field",
        "transfer",
        "expected_behaviors",
        "expected_reasoning",
        "truth_sources",
        "negative_expectation",
        "expected_elements",
        "expectations",
        "expected_output",
        *METADATA_VALUES,
    }
)
_FILE_KEYS = frozenset({"skill_name", "subject", "adjacent_concepts", "evals"})


@dataclass(frozen=True, slots=True)
class ExpectedBehavior:
    """One binary criterion: ``id``, ``text`` (the file's ``description``, or the expectation
    string), ``kind`` and where it came from (``"expected_behaviors"`` or ``"expectations"``)."""

    id: str
    text: str
    kind: BehaviorKind = "positive"
    source: Literal["expected_behaviors", "expectations"] = "expected_behaviors"


@dataclass(frozen=True, slots=True)
class ComprehensionCase:
    """One eval case in the one typed model all three formats map into.

    ``id`` is the file's id as text. ``dimension`` comes from ``comprehension_dimension`` when
    present, else from ``dimension`` through :data:`LEGACY_DIMENSIONS` (``dimension_source``
    says which); ``legacy_dimension`` keeps the ``dimension`` spelling as written.
    ``concept_field`` is the file's ``concept_field`` when the key is there (``null`` → ``None``),
    else the dimension's. Metadata enums (``substance`` …) hold the canonical spelling. ``file``,
    ``index`` (0-based position in ``evals[]``) and ``line`` locate the case; ``extra`` keeps keys
    knowmeter does not model."""

    id: str
    skill_name: str
    prompt: str
    dimension: Dimension | None
    dimension_source: Literal["comprehension_dimension", "dimension"] | None
    legacy_dimension: str | None
    concept_field: ConceptField | None
    transfer: Transfer | None
    expected_behaviors: tuple[ExpectedBehavior, ...]
    expected_reasoning: str | None
    truth_sources: tuple[TruthSource, ...]
    negative_expectation: str | None
    expected_elements: tuple[str, ...]
    expected_output: str | None
    substance: str | None
    calibration: str | None
    truth_mode: str | None
    skill_type: str | None
    criticality: str | None
    format: CaseFormat
    file: Path
    index: int
    line: int | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CaseFile:
    """One eval file: its format, the skill it is for, its cases, the repository its truth
    sources are relative to, and top-level keys knowmeter does not model (``extra``)."""

    path: Path
    format: CaseFormat
    skill_name: str
    skill_name_line: int | None
    subject: str | None
    adjacent_concepts: tuple[str, ...]
    repo_root: Path
    cases: tuple[ComprehensionCase, ...]
    extra: dict[str, Any]


def load_cases(path: Path) -> CaseFile:
    """Read one eval file in any of the three formats (see the module doc)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark in front is not part of the text
    except FileNotFoundError:
        raise SkillFormatError(path, "eval file not found") from None
    except UnicodeDecodeError as exc:
        raise SkillFormatError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    try:
        data = without_lone_surrogates(json.loads(text))
    except json.JSONDecodeError as exc:
        raise SkillFormatError(path, f"invalid JSON ({exc.msg}, column {exc.colno})", line=exc.lineno) from None
    except (RecursionError, ValueError) as exc:  # nested too deeply, a number past the digit limit
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
        raise SkillFormatError(path, f"cannot read the JSON ({what}); an eval file is a few levels deep") from None
    if path.name.endswith(ROUTING_SUFFIX) or (isinstance(data, dict) and "routing_cases" in data):
        raise SkillFormatError(path, f"{ROUTING_NOTE}; pass the skill's comprehension eval file", line=1)
    if not isinstance(data, dict) or not isinstance(data.get("evals"), list):
        raise SkillFormatError(path, "an eval file is a JSON object with an 'evals' list of cases", line=1)
    raw_cases: list[Any] = data["evals"]
    fmt = _detect_format(path, data, raw_cases)
    name_line = _line_of(text, '"skill_name"')
    skill_name = data.get("skill_name")
    if skill_name is None and fmt == "evals-json" and path.parent.name == "evals":
        skill_name = path.parent.parent.name
    if not isinstance(skill_name, str) or not skill_name.strip():
        what = "missing 'skill_name'" if skill_name is None else f"must be text, got {json.dumps(skill_name)}"
        raise SkillFormatError(
            path, f'{what}; write "skill_name": "<the SKILL.md name>"', line=name_line or 1, field="skill_name"
        )
    lines = _case_lines(text, len(raw_cases))
    reader = _CaseReader(path, fmt, skill_name.strip())
    cases = tuple(reader.read(i, raw, lines[i]) for i, raw in enumerate(raw_cases))
    _no_duplicate_ids(path, cases)
    adjacent = data.get("adjacent_concepts") or []
    return CaseFile(
        path=path,
        format=fmt,
        skill_name=skill_name.strip(),
        skill_name_line=name_line,
        subject=data.get("subject") if isinstance(data.get("subject"), str) else None,
        adjacent_concepts=tuple(a for a in adjacent if isinstance(a, str)) if isinstance(adjacent, list) else (),
        repo_root=find_repo_root(path),
        cases=cases,
        extra={k: v for k, v in data.items() if k not in _FILE_KEYS},
    )


def _detect_format(path: Path, data: Mapping[str, Any], cases: list[Any]) -> CaseFormat:
    dicts = [c for c in cases if isinstance(c, dict)]
    if path.name == "evals.json" or any("expectations" in c for c in dicts):
        return "evals-json"
    if (
        "grounding_note" in data
        or "truth_source_convention" in data
        or any("truth_sources" in c or any(k in c for k in _EXTENSIONS) for c in dicts)
    ):
        return "examples-evals"
    if path.name == "comprehension.json" or any("negative_expectation" in c or "expected_elements" in c for c in dicts):
        return "comprehension-json"
    return "examples-evals"


class _CaseReader:
    """Validates one raw case into a :class:`ComprehensionCase` (errors name file:line, case, field)."""

    def __init__(self, path: Path, fmt: CaseFormat, skill_name: str) -> None:
        self.path, self.fmt, self.skill_name = path, fmt, skill_name
        self.case_id: str | None = None
        self.line: int | None = None

    def fail(self, field_name: str | None, problem: str) -> SkillFormatError:
        return SkillFormatError(self.path, problem, line=self.line, case_id=self.case_id, field=field_name)

    def read(self, index: int, raw: Any, line: int | None) -> ComprehensionCase:
        self.line, self.case_id = line, f"#{index + 1}"
        if not isinstance(raw, dict):
            raise self.fail(None, f"a case must be a JSON object, got {type(raw).__name__}")
        cid = raw.get("id")
        if isinstance(cid, bool) or not isinstance(cid, int | str) or str(cid).strip() == "":
            raise self.fail("id", "missing or not an integer / string; give every case a unique id")
        self.case_id = str(cid).strip()
        prompt = raw.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise self.fail("prompt", "missing or empty; the prompt is the question the agent is asked")
        dimension, source, legacy = self._dimension(raw)
        return ComprehensionCase(
            id=self.case_id,
            skill_name=self.skill_name,
            prompt=prompt,
            dimension=dimension,
            dimension_source=source,
            legacy_dimension=legacy,
            concept_field=self._concept_field(raw, dimension),
            transfer=cast("Transfer | None", self._enum(raw, "transfer", ("near", "far"))),
            expected_behaviors=self._behaviors(raw),
            expected_reasoning=self._text(raw, "expected_reasoning"),
            truth_sources=self._truth_sources(raw),
            negative_expectation=self._text(raw, "negative_expectation"),
            expected_elements=self._strings(raw, "expected_elements"),
            expected_output=self._text(raw, "expected_output"),
            substance=self._metadata(raw, "substance"),
            calibration=self._metadata(raw, "calibration"),
            truth_mode=self._metadata(raw, "truth_mode"),
            skill_type=self._metadata(raw, "skill_type"),
            criticality=self._metadata(raw, "criticality"),
            format=self.fmt,
            file=self.path,
            index=index,
            line=line,
            extra={k: v for k, v in raw.items() if k not in _CASE_KEYS},
        )

    def _dimension(
        self, raw: dict[str, Any]
    ) -> tuple[Dimension | None, Literal["comprehension_dimension", "dimension"] | None, str | None]:
        legacy = self._enum(raw, "dimension", tuple(LEGACY_DIMENSIONS))
        code = self._enum(raw, "comprehension_dimension", tuple(d.value for d in Dimension))
        if code is not None:
            return Dimension(code), "comprehension_dimension", legacy
        if legacy is not None:
            return LEGACY_DIMENSIONS[legacy], "dimension", legacy
        if self.fmt == "evals-json":
            return None, None, None
        raise self.fail(
            "dimension", f"missing; accepted: {', '.join(LEGACY_DIMENSIONS)} (or comprehension_dimension C1-C9)"
        )

    def _concept_field(self, raw: dict[str, Any], dimension: Dimension | None) -> ConceptField | None:
        if "concept_field" in raw:
            return cast("ConceptField | None", self._enum(raw, "concept_field", CONCEPT_FIELDS))
        return dimension.concept_field if dimension is not None else None

    def _enum(self, raw: dict[str, Any], key: str, accepted: tuple[str, ...]) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or value not in accepted:
            raise self.fail(key, f"unknown value {value!r}; accepted: {', '.join(accepted)}")
        return value

    def _metadata(self, raw: dict[str, Any], key: str) -> str | None:
        table = METADATA_VALUES[key]
        value = self._enum(raw, key, tuple(table))
        return table[value] if value is not None else None

    def _text(self, raw: dict[str, Any], key: str) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {type(value).__name__}")
        return value

    def _strings(self, raw: dict[str, Any], key: str) -> tuple[str, ...]:
        value = raw.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "must be a list of strings")
        return tuple(value)

    def _truth_sources(self, raw: dict[str, Any]) -> tuple[TruthSource, ...]:
        out: list[TruthSource] = []
        for entry in self._strings(raw, "truth_sources"):
            parsed = TruthSource.parse(entry)
            if parsed is None:
                raise self.fail("truth_sources", f"{entry!r} is not a truth source; write {TRUTH_SOURCE_FORMS}")
            out.append(parsed)
        return tuple(out)

    def _behaviors(self, raw: dict[str, Any]) -> tuple[ExpectedBehavior, ...]:
        out = [
            ExpectedBehavior(f"expectation-{i}", text, "positive", "expectations")
            for i, text in enumerate(self._strings(raw, "expectations"), 1)
        ]
        items = raw.get("expected_behaviors")
        if items is None:
            return tuple(out)
        if not isinstance(items, list):
            raise self.fail("expected_behaviors", "must be a list of {id, kind, description} objects")
        seen: set[str] = set()
        for item in items:
            if not isinstance(item, dict):
                raise self.fail("expected_behaviors", "each behavior is an object {id, kind, description}")
            bid, kind = item.get("id"), item.get("kind")
            text = item.get("description", item.get("text"))
            if not isinstance(bid, str) or not bid.strip():
                raise self.fail("expected_behaviors", "a behavior has no 'id'; give each a unique id")
            if bid in seen:
                raise self.fail("expected_behaviors", f"behavior id {bid!r} appears twice; ids must be unique")
            if kind not in ("positive", "negative"):
                raise self.fail(
                    f"expected_behaviors.{bid}.kind", f"unknown value {kind!r}; accepted: positive, negative"
                )
            if not isinstance(text, str) or not text.strip():
                raise self.fail(f"expected_behaviors.{bid}.description", "missing; say what the answer must (not) do")
            seen.add(bid)
            out.append(ExpectedBehavior(bid, text, cast("BehaviorKind", kind)))
        return tuple(out)


def _no_duplicate_ids(path: Path, cases: tuple[ComprehensionCase, ...]) -> None:
    first: dict[str, ComprehensionCase] = {}
    for case in cases:
        if case.id in first:
            problem = f"duplicate id (first at case #{first[case.id].index + 1}); ids must be unique"
            raise SkillFormatError(path, problem, line=case.line, case_id=case.id, field="id")
        first[case.id] = case


def _line_of(text: str, needle: str) -> int | None:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _case_lines(text: str, count: int) -> list[int | None]:
    """1-based line where each element of the top-level ``evals`` array starts."""
    none: list[int | None] = [None] * count
    m = re.search(r'"evals"\s*:\s*\[', text)
    if m is None:
        return none
    decoder = json.JSONDecoder()
    pos, out = m.end(), []
    ws = re.compile(r"[\s,]*")
    for _ in range(count):
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        out.append(text.count("\n", 0, pos) + 1)
        try:
            _, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return none
    return list(out)
