"""Activation cases and their four file formats, read into one model.

- **plain** (``.yaml`` / ``.yml`` / ``.json``): a list of cases, or ``{distractors: [...], cases:
  [...]}``; a case is ``{id?, prompt, should_trigger, distractors?, expected_winner?}``. File-level
  ``distractors`` apply to every case that names none.
- **Skill Graph SKILL.md**: its frontmatter ``examples`` (should trigger) and ``anti_examples``
  (should not), read through ``knowmeter.skillgraph.load_skill``.
- **Skill Graph ``*.routing.json``** (``kind: routing_eval``, ``routing_cases``): each case's
  ``query`` (``triggers``, ``paths_touched``, ``keywords``) becomes the prompt, its
  ``candidates`` are installed, and the skill under test should fire when it is the
  ``expected_winner``. Cases whose candidates do not include the skill under test are left out
  (counted in ``notes``).
- **skill-creator trigger eval** (Anthropic's ``run_eval.py``): a JSON list of
  ``{query, should_trigger}``.

Distractors are skill names (found in the skill folders given) or paths to a SKILL.md or its
folder, relative to the case file. Every error is one line naming the file and the case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowmeter._yaml import parse_json, parse_yaml, read_user_text
from knowmeter.errors import InputError

__all__ = ["ActivationCase", "CaseFile", "load_activation_cases"]


@dataclass(frozen=True, slots=True)
class ActivationCase:
    """One prompt: should the skill under test fire? ``distractors`` are the other skills
    installed beside it (names or paths, as the file gives them); ``expected_winner`` is set for a
    routing case (the skill that should be loaded first)."""

    case_id: str
    prompt: str
    should_trigger: bool
    distractors: tuple[str, ...] = ()
    expected_winner: str | None = None


@dataclass(frozen=True, slots=True)
class CaseFile:
    """The cases of one file, its format and what was left out (``notes``)."""

    path: Path
    format: str
    cases: tuple[ActivationCase, ...]
    notes: tuple[str, ...] = field(default=())


def _fail(path: Path, where: str, what: str) -> InputError:
    return InputError(f"{path}: {where}: {what}")


def _text(value: Any, path: Path, where: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, where, f"{key!r} must be non-empty text")
    return value.strip()


def _names(value: Any, path: Path, where: str, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, where, f"{key!r} must be a list of skill names or SKILL.md paths")
    return tuple(v.strip() for v in value)


def _flag(value: Any, path: Path, where: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, where, "'should_trigger' must be true or false")
    return value


def _read_data(path: Path) -> Any:
    text = read_user_text(path, "activation case file")
    return parse_json(text, path) if path.suffix.lower() == ".json" else parse_yaml(text, path)


_PLAIN_KEYS = {"id", "prompt", "should_trigger", "distractors", "expected_winner"}


def _plain(path: Path, data: Any) -> CaseFile:
    shared: tuple[str, ...] = ()
    if isinstance(data, dict):
        unknown = set(data) - {"cases", "distractors"}
        if unknown:
            raise _fail(path, "top level", f"unknown key {sorted(unknown)[0]!r} (expected cases, distractors)")
        shared = _names(data.get("distractors"), path, "top level", "distractors")
        data = data.get("cases")
    if not isinstance(data, list) or not data:
        raise _fail(path, "top level", "expected a non-empty list of cases (or {cases: [...]})")
    cases = []
    for i, raw in enumerate(data, 1):
        where = f"case {i}"
        if not isinstance(raw, dict):
            raise _fail(path, where, "a case must be a mapping with prompt and should_trigger")
        if "id" in raw:
            where = f"case {raw['id']!r}"
        unknown = set(raw) - _PLAIN_KEYS
        if unknown:
            raise _fail(path, where, f"unknown key {sorted(unknown)[0]!r} (expected {', '.join(sorted(_PLAIN_KEYS))})")
        if "should_trigger" not in raw:
            raise _fail(path, where, "missing 'should_trigger' (true or false)")
        winner = raw.get("expected_winner")
        cases.append(
            ActivationCase(
                str(raw.get("id", f"case-{i}")),
                _text(raw.get("prompt"), path, where, "prompt"),
                _flag(raw["should_trigger"], path, where),
                _names(raw.get("distractors"), path, where, "distractors") or shared,
                None if winner is None else _text(winner, path, where, "expected_winner"),
            )
        )
    return CaseFile(path, "plain", _unique(path, cases))


def _skill_creator(path: Path, data: list[Any]) -> CaseFile:
    cases = []
    for i, raw in enumerate(data, 1):
        where = f"item {i}"
        if not isinstance(raw, dict):
            raise _fail(path, where, "an item must be {query, should_trigger}")
        if "should_trigger" not in raw:
            raise _fail(path, where, "missing 'should_trigger' (true or false)")
        cases.append(
            ActivationCase(
                f"q{i}", _text(raw.get("query"), path, where, "query"), _flag(raw["should_trigger"], path, where)
            )
        )
    return CaseFile(path, "skill-creator", tuple(cases))


def _routing_prompt(query: Any, path: Path, where: str) -> str:
    if not isinstance(query, dict):
        raise _fail(path, where, "'query' must be {triggers, paths_touched, keywords}")
    parts = []
    triggers = _names(query.get("triggers"), path, where, "query.triggers")
    paths = _names(query.get("paths_touched"), path, where, "query.paths_touched")
    keywords = _names(query.get("keywords"), path, where, "query.keywords")
    if triggers:
        parts.append(" ".join(t if t.endswith((".", "?", "!")) else t + "." for t in triggers))
    if paths:
        parts.append("Files touched: " + ", ".join(paths) + ".")
    if keywords:
        parts.append("Keywords: " + ", ".join(keywords) + ".")
    if not parts:
        raise _fail(path, where, "'query' has no triggers, paths_touched or keywords")
    return " ".join(parts)


def _routing(path: Path, data: dict[str, Any], skill: str) -> CaseFile:
    raw_cases = data.get("routing_cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise _fail(path, "routing_cases", "expected a non-empty list")
    cases, skipped = [], []
    for i, raw in enumerate(raw_cases, 1):
        if not isinstance(raw, dict):
            raise _fail(path, f"routing case {i}", "a case must be a mapping")
        case_id = str(raw.get("id", f"routing-{i}"))
        where = f"routing case {case_id!r}"
        candidates = _names(raw.get("candidates"), path, where, "candidates")
        winner = _text(raw.get("expected_winner"), path, where, "expected_winner")
        if winner not in candidates:
            raise _fail(path, where, f"expected_winner {winner!r} is not one of its candidates")
        if skill not in candidates:
            skipped.append(case_id)
            continue
        prompt = _routing_prompt(raw.get("query"), path, where)
        others = tuple(c for c in candidates if c != skill)
        cases.append(ActivationCase(case_id, prompt, winner == skill, others, winner))
    notes = (
        (f"{len(skipped)} routing case(s) left out: {skill!r} is not among their candidates ({', '.join(skipped)})",)
        if skipped
        else ()
    )
    if not cases:
        raise _fail(path, "routing_cases", f"no case lists {skill!r} among its candidates")
    return CaseFile(path, "skillgraph-routing", _unique(path, cases), notes)


def _skill_md(path: Path) -> CaseFile:
    from knowmeter.skillgraph import load_skill

    skill = load_skill(path)
    path = skill.path
    cases = []
    for key, should in (("examples", True), ("anti_examples", False)):
        values = skill.frontmatter.get(key) or []
        if not isinstance(values, list):
            raise _fail(path, key, "must be a list of prompts")
        for i, prompt in enumerate(values, 1):
            where = f"{key}[{i}]"
            cases.append(ActivationCase(f"{key.replace('_', '-')}-{i}", _text(prompt, path, where, key), should))
    if not cases:
        raise _fail(path, "frontmatter", "no examples or anti_examples to run")
    return CaseFile(path, "skillgraph-skill", tuple(cases))


def _unique(path: Path, cases: list[ActivationCase]) -> tuple[ActivationCase, ...]:
    seen: set[str] = set()
    for case in cases:
        if case.case_id in seen:
            raise _fail(path, f"case {case.case_id!r}", "id used twice; give every case its own id")
        seen.add(case.case_id)
    return tuple(cases)


def load_activation_cases(path: Path, skill: str) -> CaseFile:
    """The cases of ``path`` for the skill named ``skill`` (its frontmatter name); the format is
    told from the file (see the module docstring)."""
    path = Path(path)
    if path.is_dir() or path.suffix.lower() == ".md":
        return _skill_md(path)
    data = _read_data(path)
    if isinstance(data, dict) and ("routing_cases" in data or data.get("kind") == "routing_eval"):
        return _routing(path, data, skill)
    if isinstance(data, list) and data and all(isinstance(d, dict) and "query" in d for d in data):
        return _skill_creator(path, data)
    return _plain(path, data)
