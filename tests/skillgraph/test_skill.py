"""load_skill on every reference SKILL.md and on the v6 / v8 / marketplace shapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest

from knowmeter.skillgraph import Dimension, SkillFormatError, load_skill

# FORMATS.md §1.6: the concept block of skills/type-safety/SKILL.md, line by line
CONCEPT_LINES = {
    "definition": (64, 64),
    "mental_model": (65, 78),
    "purpose": (79, 84),
    "boundary": (85, 94),
    "taxonomy": (95, 103),
    "analogy": (104, 107),
    "misconception": (108, 115),
}


def test_every_reference_skill_loads(ref: Path) -> None:
    paths = sorted((ref / "skills").glob("*/SKILL*.md"))
    assert len(paths) == 5
    for path in paths:
        skill = load_skill(path)
        assert skill.name == path.parent.name
        assert skill.repo_root == ref
        assert skill.section("Verification") is not None
        assert skill.section("Do NOT Use When") is not None
        assert not skill.marketplace_export
        assert skill.body.startswith("\n#") and "---" not in skill.body.splitlines()[:2]


def test_v4_concept_block_with_source_lines(ref: Path) -> None:
    skill = load_skill(ref / "skills" / "type-safety")
    assert skill.shape == "v4" and skill.schema_version == 4 and skill.audit_state is None
    assert {f: (c.line, c.end_line) for f, c in skill.concept.items()} == CONCEPT_LINES
    assert all(c.key == f"concept.{f}" for f, c in skill.concept.items())
    assert skill.concept_text("definition").startswith("Type safety is the property of a program")  # type: ignore[union-attr]
    lines = (ref / "skills" / "type-safety" / "SKILL.md").read_text().splitlines()
    assert lines[CONCEPT_LINES["analogy"][0] - 1].strip() == "analogy: |"
    assert skill.comprehension_state == "present"


def test_sections_by_heading_with_file_lines(ref: Path) -> None:
    committed = load_skill(ref / "skills" / "type-safety" / "SKILL.md")
    pre = load_skill(ref / "skills" / "type-safety" / "SKILL.pre-R1.md")
    # FORMATS.md §1.6: Verification 256 / Do NOT Use When 268; pre-R1 252 / 264
    assert (committed.section("Verification").line, committed.section("do not use when").line) == (256, 268)  # type: ignore[union-attr]
    assert (pre.section("Verification").line, pre.section("Do NOT Use When").line) == (252, 264)  # type: ignore[union-attr]
    assert committed.section("Evals") is not None and pre.section("Evals") is None
    verification = committed.section("Verification")
    assert verification is not None and verification.text.count("- [ ]") == 8
    assert committed.anchor("any-vs-unknown-vs-never").line == 241  # type: ignore[union-attr]
    assert committed.anchor("soundness-what-the-system-actually-promises") is not None


def test_grading_text_per_dimension(ref: Path) -> None:
    skill = load_skill(ref / "skills" / "type-safety")
    assert skill.grading_text(Dimension.C1) == skill.concept_text("definition")
    assert skill.grading_text(Dimension.C7) == skill.concept_text("misconception")
    assert "- [ ]" in (skill.grading_text(Dimension.C8) or "")
    assert "| Instead of this skill | Use | Why |" in (skill.grading_text(Dimension.C9) or "")
    legacy = load_skill(ref / "skills" / "a11y")  # v4 without a concept block
    assert legacy.concept == {} and legacy.grading_text(Dimension.C2) is None
    assert legacy.grading_text(Dimension.C8) is not None


def test_v6_flat_fields(reshaped: Callable[[str], Path], ref: Path) -> None:
    v4 = load_skill(ref / "skills" / "type-safety")
    skill = load_skill(reshaped("v6"))
    assert skill.shape == "v6"
    assert skill.concept_text("boundary") == v4.concept_text("boundary")
    assert skill.concept["boundary"].key == "boundary"
    # v6: definition is covered by description; taxonomy by category + relations (no prose)
    assert skill.concept["definition"].key == "description" and skill.concept_text("taxonomy") is None
    text = skill.path.read_text().splitlines()
    for c in skill.concept.values():
        assert c.line is not None and text[c.line - 1].startswith(f"{c.key}:")


def test_v8_flat_fields_and_sidecar(reshaped: Callable[[str], Path], ref: Path) -> None:
    skill = load_skill(reshaped("v8"))
    assert skill.shape == "v8"
    assert skill.concept["boundary"].key == "concept_boundary"
    assert skill.audit_state is not None and skill.audit_state["comprehension_verdict"] == "UNVERIFIED"
    assert skill.audit_state_path == skill.path.parent / "audit-state.json"
    assert skill.comprehension_state == "present"  # only the sidecar says so


def test_flat_field_wins_over_nested(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\nname: x\npurpose: flat\nconcept:\n  purpose: nested\n  analogy: nested analogy\n---\nbody\n")
    skill = load_skill(path)
    assert skill.concept_text("purpose") == "flat" and skill.concept_text("analogy") == "nested analogy"
    assert skill.concept["analogy"].line == 6


@pytest.mark.parametrize("shape", ["market-v056", "market-head"])
def test_marketplace_export_detected_never_graded_against_pipe(reshaped: Callable[[str], Path], shape: str) -> None:
    skill = load_skill(reshaped(shape))
    assert skill.marketplace_export
    assert skill.marketplace_reason is not None and "mental_model" in skill.marketplace_reason
    assert "'|'" in skill.marketplace_reason
    assert all(c.text != "|" for c in skill.concept.values())
    assert skill.concept_text("mental_model") is None and skill.grading_text(Dimension.C2) is None
    if shape == "market-v056":  # single-line fields survive inside the packed JSON
        assert skill.concept["definition"].key == "metadata.metadata concept.definition"
    else:
        assert skill.concept_text("analogy") == "passport check"


def test_no_frontmatter(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("# Title\n\nno frontmatter\n")
    with pytest.raises(SkillFormatError, match=r"SKILL\.md:1: no YAML frontmatter"):
        load_skill(path)


def test_unclosed_frontmatter(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\nname: x\n")
    with pytest.raises(SkillFormatError, match="not closed"):
        load_skill(path)


def test_yaml_error_names_the_file_line(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\nname: x\ndescription: ok\nkeywords: [a, b\nother: 1\n---\nbody\n")
    with pytest.raises(ValueError) as info:
        load_skill(path)
    message = str(info.value)
    assert str(path) in message and "line 5" in message and "\n" not in message


def test_missing_name_and_bad_field_type(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\ndescription: x\n---\n")
    with pytest.raises(SkillFormatError, match="no 'name'"):
        load_skill(path)
    path.write_text("---\ndescription: x\nname: 2026-01-01\n---\n")  # YAML reads a date, not the name 'missing'
    with pytest.raises(SkillFormatError, match=r"SKILL\.md:3: field 'name': must be text, got date \(2026-01-01\)"):
        load_skill(path)
    path.write_text("---\nname: x\nconcept:\n  purpose:\n    - a list\n---\n")
    with pytest.raises(SkillFormatError, match=r"SKILL\.md:4: field 'concept\.purpose': must be text"):
        load_skill(path)


def test_bad_audit_state(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: x\n---\n")
    (tmp_path / "audit-state.json").write_text('{\n  "a": 1,\n}\n')
    with pytest.raises(SkillFormatError, match=r"audit-state\.json:3: invalid JSON"):
        load_skill(tmp_path)
    (tmp_path / "audit-state.json").write_text(json.dumps([1]))
    with pytest.raises(SkillFormatError, match="must be a JSON object"):
        load_skill(tmp_path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SkillFormatError, match="file not found"):
        load_skill(tmp_path / "nope")


@pytest.mark.parametrize("name", ["a11y", "debugging", "documentation", "type-safety"])
def test_a_byte_order_mark_or_crlf_changes_nothing_read(tmp_path: Path, ref: Path, name: str) -> None:
    """Editors on Windows save SKILL.md and eval files with a byte-order mark and CRLF: each real
    reference skill and eval file so saved reads as the original does (a SKILL.md with a mark was
    "no YAML frontmatter", an eval file with one "invalid JSON"), lint included."""
    from knowmeter.skillgraph import lint_paths, load_cases

    eval_name = "comprehension.json" if name == "documentation" else f"{name}.json"
    for base, saved in (("plain", lambda b: b), ("windows", lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n"))):
        folder = tmp_path / base / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(saved((ref / "skills" / name / "SKILL.md").read_bytes()))
        (tmp_path / base / "evals").mkdir()
        (tmp_path / base / "evals" / eval_name).write_bytes(saved((ref / "evals" / eval_name).read_bytes()))
    plain, windows = (load_skill(tmp_path / b / "skills" / name) for b in ("plain", "windows"))
    assert (windows.frontmatter, windows.concept) == (plain.frontmatter, plain.concept)
    assert windows.sections == plain.sections
    files = [load_cases(tmp_path / b / "evals" / eval_name) for b in ("plain", "windows")]
    cases = [[{k: v for k, v in asdict(c).items() if k != "file"} for c in f.cases] for f in files]
    assert cases[0] == cases[1] and cases[0]
    linted = [lint_paths([tmp_path / b / "skills" / name]) for b in ("plain", "windows")]
    assert linted[1].unreadable == [] and len(linted[1].findings) == len(linted[0].findings)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"x": ' + "[" * 5000 + "]" * 5000 + "}", "cannot read the JSON (nested too deeply)"),
        ('{"schema_version": 8, "eval_score": NaN}', "NaN is not a JSON number"),
        ('{"schema_version": 8, "eval_score": 1e400}', "the number 1e400 is past the range of a float"),
    ],
)
def test_an_audit_state_json_cannot_parse_is_one_line(tmp_path: Path, content: str, problem: str) -> None:
    """A sidecar nested past Python's recursion limit was a RecursionError traceback; one with NaN
    (which Skill Graph's JSON.parse refuses) was read, and written back, as if it were JSON."""
    (tmp_path / "SKILL.md").write_text("---\nname: x\n---\n")
    (tmp_path / "audit-state.json").write_text(content)
    with pytest.raises(SkillFormatError) as err:
        load_skill(tmp_path)
    assert problem in str(err.value) and "audit-state.json" in str(err.value) and "\n" not in str(err.value)
