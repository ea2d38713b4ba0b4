"""load_cases on every reference eval file, the enum mapping, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowmeter.skillgraph import (
    LEGACY_DIMENSIONS,
    METADATA_VALUES,
    Dimension,
    SkillFormatError,
    find_case_files,
    find_skill_file,
    load_cases,
    load_skill,
)


def _reference_eval_files(ref: Path) -> list[Path]:
    return sorted(ref.glob("evals/*.json")) + sorted(ref.glob("comprehension-json/*/evals/*.json"))


def test_every_reference_eval_file_loads(ref: Path) -> None:
    loaded = {p.relative_to(ref).as_posix(): load_cases(p) for p in _reference_eval_files(ref)}
    summary = {k: (f.format, f.skill_name, len(f.cases)) for k, f in loaded.items()}
    assert summary == {
        "evals/a11y.json": ("examples-evals", "a11y", 12),
        "evals/comprehension.json": ("examples-evals", "documentation", 12),
        "evals/debugging.json": ("examples-evals", "debugging", 10),
        "evals/type-safety.json": ("examples-evals", "type-safety", 10),
        "comprehension-json/type-safety/evals/comprehension.json": ("comprehension-json", "type-safety", 7),
    }
    for f in loaded.values():
        text = f.path.read_text().splitlines()
        for case in f.cases:
            assert case.dimension is not None and case.skill_name == f.skill_name
            assert case.line is not None and text[case.line - 1].strip() == "{"
            assert case.file == f.path and f.cases[case.index] is case


def test_c_extensions_of_type_safety(ref: Path) -> None:
    cases = load_cases(ref / "evals" / "type-safety.json").cases
    assert [c.dimension for c in cases] == [Dimension(f"C{i}") for i in (1, 2, 3, 4, 5, 6, 7, 8, 9, 7)]
    assert all(c.dimension_source == "comprehension_dimension" for c in cases)
    assert [c.concept_field for c in cases] == [
        "definition",
        "mental_model",
        "purpose",
        "boundary",
        "taxonomy",
        "analogy",
        "misconception",
        None,
        None,
        "misconception",
    ]
    assert [c.transfer for c in cases].count("far") == 4
    assert sum(len(c.expected_behaviors) for c in cases) == 45  # FORMATS.md §2.1
    first = cases[0]
    assert first.expected_behaviors[2].id == "no_verbatim_span" and first.expected_behaviors[2].kind == "negative"
    assert first.expected_reasoning is not None and first.legacy_dimension == "definition"
    assert [t.raw for t in first.truth_sources] == [
        "skills/type-safety/SKILL.md:64",
        "skills/type-safety/SKILL.md#type-safety",
    ]
    assert (first.truth_sources[0].start, first.truth_sources[0].end, first.truth_sources[1].anchor) == (
        64,
        64,
        "type-safety",
    )
    # enum spellings of examples/evals folded into the one model
    assert first.skill_type == "concept" and cases[4].criticality == "medium"  # "normal"
    assert cases[6].legacy_dimension == "anti_pattern" and cases[6].dimension is Dimension.C7


def test_legacy_dimensions_map(ref: Path) -> None:
    doc = load_cases(ref / "evals" / "comprehension.json")
    by_id = {c.id: c for c in doc.cases}
    assert by_id["11"].legacy_dimension == "rule_conflict" and by_id["11"].dimension is Dimension.C2
    assert by_id["4"].legacy_dimension == "application" and by_id["4"].dimension is Dimension.C8
    assert by_id["4"].concept_field is None and by_id["1"].concept_field == "definition"
    assert all(c.expected_behaviors == () for c in doc.cases)
    assert "truth_source_convention" in doc.extra
    assert set(LEGACY_DIMENSIONS) >= {c.legacy_dimension for c in doc.cases}


def test_comprehension_json_format(ref: Path) -> None:
    f = load_cases(ref / "comprehension-json" / "type-safety" / "evals" / "comprehension.json")
    assert f.format == "comprehension-json"
    by_id = {c.id: c for c in f.cases}
    assert by_id["4"].negative_expectation is not None and by_id["4"].negative_expectation.startswith("Must not")
    assert by_id["7"].dimension is Dimension.C7 and by_id["7"].concept_field == "misconception"
    assert by_id["5"].skill_type == "procedure" and by_id["6"].criticality == "medium"
    assert all(c.truth_sources == () and c.transfer is None for c in f.cases)
    # Skill Graph's layout: skillDir = dirname(dirname(evalFile)); the reference copy has no SKILL.md
    assert find_skill_file(f) is None


def _write(tmp_path: Path, data: Any, name: str = "x.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2))
    return path


def test_expected_elements_tolerated_and_kept(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "contract-testing" / "evals"
    folder.mkdir(parents=True)
    case = {
        "id": 1,
        "dimension": "definition",
        "prompt": "Define it.",
        "substance": "concept",
        "calibration": "semantic",
        "truth_mode": "spec_grounded",
        "skill_type": "concept",
        "criticality": "low",
        "expected_elements": ["consumer-driven", "provider verification"],
        "authored_by": "hand",
    }
    f = load_cases(
        _write(folder, {"skill_name": "contract-testing", "subject": "s", "evals": [case]}, "comprehension.json")
    )
    (only,) = f.cases
    assert f.format == "comprehension-json" and f.repo_root == tmp_path
    assert only.expected_elements == ("consumer-driven", "provider verification")
    assert only.extra == {"authored_by": "hand"}


def test_evals_json_expectations(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "debugging" / "evals"
    folder.mkdir(parents=True)
    (folder.parent / "SKILL.md").write_text("---\nname: debugging\n---\n# Debugging\n")
    data = {
        "evals": [
            {
                "id": 1,
                "prompt": "The test fails.",
                "expected_output": "a reproduction first",
                "expectations": ["reproduces the failure", "bisects"],
                "files": [],
                "criticality": "medium",
            }
        ]
    }
    f = load_cases(_write(folder, data, "evals.json"))
    (case,) = f.cases
    assert f.format == "evals-json" and f.skill_name == "debugging"  # from the skill folder
    assert case.dimension is None and case.concept_field is None
    assert [(b.id, b.text, b.kind, b.source) for b in case.expected_behaviors] == [
        ("expectation-1", "reproduces the failure", "positive", "expectations"),
        ("expectation-2", "bisects", "positive", "expectations"),
    ]
    assert case.expected_output == "a reproduction first" and case.extra == {"files": []}
    skill_file = find_skill_file(f)
    assert skill_file is not None and find_case_files(load_skill(skill_file)) == [folder / "evals.json"]


def test_find_skill_and_cases_in_reference(ref: Path) -> None:
    f = load_cases(ref / "evals" / "type-safety.json")
    assert find_skill_file(f) == ref / "skills" / "type-safety" / "SKILL.md"
    assert find_case_files(load_skill(ref / "skills" / "type-safety")) == [ref / "evals" / "type-safety.json"]


_CASE = {"id": 7, "prompt": "p", "dimension": "definition", "truth_sources": ["SKILL.md:1"]}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"dimension": "vibes"}, "case 7: field 'dimension': unknown value 'vibes'; accepted: definition, "),
        ({"comprehension_dimension": "C10"}, "field 'comprehension_dimension': unknown value 'C10'; accepted: C1, "),
        ({"transfer": "medium"}, "field 'transfer': unknown value 'medium'; accepted: near, far"),
        ({"concept_field": "vibe"}, "field 'concept_field': unknown value 'vibe'; accepted: definition, "),
        (
            {"criticality": "urgent"},
            "field 'criticality': unknown value 'urgent'; accepted: critical, high, medium, normal, low",
        ),
        ({"dimension": None}, "field 'dimension': missing; accepted:"),
        ({"prompt": ""}, "field 'prompt': missing or empty"),
        ({"id": True}, "case #1: field 'id': missing or not"),
        ({"truth_sources": ["a:b:c"]}, "field 'truth_sources': 'a:b:c' is not a truth source; write path, path:N"),
        (
            {"expected_behaviors": [{"id": "a", "kind": "sideways", "description": "d"}]},
            "field 'expected_behaviors.a.kind': unknown value 'sideways'; accepted: positive, negative",
        ),
        (
            {
                "expected_behaviors": [
                    {"id": "a", "kind": "positive", "description": "d"},
                    {"id": "a", "kind": "negative", "description": "e"},
                ]
            },
            "appears twice",
        ),
        ({"expected_behaviors": [{"id": "a", "kind": "positive"}]}, "'expected_behaviors.a.description': missing"),
        ({"expected_elements": "one"}, "field 'expected_elements': must be a list of strings"),
    ],
)
def test_bad_case_is_one_line(tmp_path: Path, change: dict[str, Any], expected: str) -> None:
    path = _write(tmp_path, {"skill_name": "s", "evals": [{**_CASE, **change}]})
    with pytest.raises(SkillFormatError) as info:
        load_cases(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4: ") and expected in message and "\n" not in message
    assert isinstance(info.value, ValueError)


def test_every_accepted_metadata_value_loads(tmp_path: Path) -> None:
    evals = [
        {**_CASE, "id": i, key: value}
        for i, (key, value) in enumerate(((k, v) for k, table in METADATA_VALUES.items() for v in table), 1)
    ]
    f = load_cases(_write(tmp_path, {"skill_name": "s", "evals": evals}))
    assert len(f.cases) == sum(len(t) for t in METADATA_VALUES.values())


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{", "x.json:1: invalid JSON"),
        ([], "an eval file is a JSON object with an 'evals' list"),
        ({"evals": [_CASE]}, "field 'skill_name': missing 'skill_name'"),
        ({"skill_name": 7, "evals": [_CASE]}, "x.json:2: field 'skill_name': must be text, got 7; write"),
        ({"skill_name": "s", "evals": [_CASE, _CASE]}, "case 7: field 'id': duplicate id (first at case #1)"),
        ({"skill_name": "s", "evals": ["text"]}, "case #1: a case must be a JSON object"),
    ],
)
def test_bad_file(tmp_path: Path, data: Any, expected: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    with pytest.raises(SkillFormatError, match=None) as info:
        load_cases(path)
    assert expected in str(info.value)
