"""Every lint rule fires on a file that breaks it and stays quiet on one that does not; the
reference files lint to exactly the findings FORMATS.md documents."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from knowmeter.skillgraph import RULES, Finding, lint_paths


@pytest.fixture
def repo(tmp_path: Path, ref: Path) -> Path:
    """A copy of the reference repository (skills/, evals/) that a test may break."""
    shutil.copytree(ref / "skills", tmp_path / "skills")
    shutil.copytree(ref / "evals", tmp_path / "evals")
    return tmp_path


def rules(findings: list[Finding]) -> Counter[str]:
    return Counter(f.rule for f in findings)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_reference_lints_to_the_documented_findings(ref: Path) -> None:
    result = lint_paths([ref])
    assert result.unreadable == [] and result.errors == 0
    assert len(result.skills) == 4 and len(result.eval_files) == 5
    assert rules(result.findings) == {
        "grading-source": 12,
        "truth-source-drift": 3,
        "skill-not-found": 1,
        "c2-scenario": 4,
    }
    drift = [(f.path.name, f.case_id) for f in result.findings if f.rule == "truth-source-drift"]
    # FORMATS.md §1.6: type-safety.json cites the pre-R1 lines for Verification / Do NOT Use When
    assert drift == [("type-safety.json", "4"), ("type-safety.json", "8"), ("type-safety.json", "9")]
    # a SKILL.md given by path brings its eval file; the truth sources still cite SKILL.md itself
    pre_r1 = lint_paths([ref / "skills" / "type-safety" / "SKILL.pre-R1.md"])
    assert pre_r1.eval_files == [ref / "evals" / "type-safety.json"]
    assert rules(pre_r1.findings) == {"truth-source-drift": 3}


def test_drift_quiet_against_the_file_the_cases_were_written_for(repo: Path) -> None:
    skill = repo / "skills" / "type-safety"
    shutil.copy(skill / "SKILL.pre-R1.md", skill / "SKILL.md")
    edit(skill / "SKILL.md", "eval_artifacts: planned", "eval_artifacts: present")
    result = lint_paths([skill])
    assert "truth-source-drift" not in rules(result.findings)
    assert rules(result.findings) == {"required-section": 1}  # pre-R1 has no '## Evals' section


def test_truth_source_file_range_anchor(repo: Path) -> None:
    cases = repo / "evals" / "type-safety.json"
    edit(cases, '"skills/type-safety/SKILL.md:79-84"', '"skills/type-safety/SKILL.md:279-300"')
    edit(cases, '"skills/type-safety/SKILL.md:95-103"', '"skills/type-safty/SKILL.md:95-103"')
    edit(cases, '"skills/type-safety/SKILL.md#the-runtime-boundary"', '"skills/type-safety/SKILL.md#runtime-edge"')
    found = {f.rule: f for f in lint_paths([cases]).findings}
    assert found["truth-source-range"].case_id == "3" and found["truth-source-range"].line == 57
    assert "runs past the end of skills/type-safety/SKILL.md (285 lines)" in found["truth-source-range"].message
    assert found["truth-source-file"].case_id == "5"
    assert found["truth-source-anchor"].case_id == "2" and "#runtime-edge" in found["truth-source-anchor"].message
    assert all(found[r].severity == "error" for r in ("truth-source-range", "truth-source-file", "truth-source-anchor"))


def test_skill_name_mismatch_and_not_found(repo: Path) -> None:
    folder = repo / "skills" / "debugging" / "evals"
    folder.mkdir()
    data = {"skill_name": "debuging", "evals": [{"id": 1, "prompt": "p", "dimension": "definition"}]}
    (folder / "comprehension.json").write_text(json.dumps(data))
    found = lint_paths([folder / "comprehension.json"]).findings
    assert rules(found) == {"skill-name": 1} and "'debuging'" in found[0].message
    data["skill_name"] = "debugging"
    (folder / "comprehension.json").write_text(json.dumps(data))
    assert rules(lint_paths([folder / "comprehension.json"]).findings) == {"grading-source": 1}
    # an eval file with no SKILL.md by layout is paired with the one SKILL.md given
    (repo / "elsewhere").mkdir()
    lone = repo / "elsewhere" / "lone.json"
    lone.write_text(json.dumps({**data, "skill_name": "a11y"}))
    assert rules(lint_paths([lone]).findings) == {"skill-not-found": 1}
    paired = lint_paths([repo / "skills" / "type-safety" / "SKILL.md", lone]).findings
    assert [f.rule for f in paired if f.path == lone] == ["skill-name"]


def test_comprehension_understanding(repo: Path, reshaped: Callable[[str], Path]) -> None:
    skill = repo / "skills" / "type-safety" / "SKILL.md"
    text = skill.read_text()
    start, end = text.index("  analogy: |"), text.index("  misconception: |")
    skill.write_text(text[:start] + text[end:])
    found = [f for f in lint_paths([skill]).findings if f.rule == "comprehension-understanding"]
    assert len(found) == 1 and found[0].line == 18 and "analogy missing" in found[0].message
    # v8: the sidecar says present, the SKILL.md lacks the fields (the cross-file rule)
    v8 = reshaped("v8")
    assert "comprehension-understanding" not in rules(lint_paths([v8]).findings)
    edit(v8, "concept_boundary:", "scope_note:")
    (hit,) = [f for f in lint_paths([v8]).findings if f.rule == "comprehension-understanding"]
    # Skill Graph's reason (skill-lint.js, the ADR-0019 cross-file gate), on the SKILL.md
    assert hit.path.name == "SKILL.md" and "audit-state.json declares comprehension_state: present" in hit.message
    assert "missing required Understanding field(s): concept_boundary;" in hit.message


def test_required_and_empty_sections(repo: Path, reshaped: Callable[[str], Path]) -> None:
    skill = repo / "skills" / "a11y" / "SKILL.md"
    edit(skill, "## Verification", "## Checks")
    edit(skill, "## Philosophy\n", "## Philosophy\n\nShort.\n\n## Notes\n")
    found = [f for f in lint_paths([skill]).findings if f.path == skill]
    assert rules(found) == {"required-section": 1, "empty-section": 1}
    assert "missing '## Verification'" in next(f.message for f in found if f.rule == "required-section")
    v8 = reshaped("v8")  # the type-safety body has none of the v8 section names but Coverage/Verification/...
    messages = [f.message for f in lint_paths([v8]).findings if f.rule == "required-section"]
    assert [m.split(" (v8 requires")[0] for m in sorted(messages)] == [
        "required skill-content body section missing: `## Concept of the skill`",
        "required skill-content body section missing: `## Philosophy of the skill`",
    ]
    body = v8.read_text().replace("## Coverage", "## Coverage\n\nfiller\n\n## Concept of the skill\n\n" + "x" * 60, 1)
    v8.write_text(body)
    messages = [f.message for f in lint_paths([v8]).findings if f.rule == "required-section"]
    assert (
        "`## Concept of the skill` must lead the skill-content sections, but `## Coverage` (line 74) precedes it"
        in messages
    )


def test_eval_artifacts_and_eval_state(repo: Path, reshaped: Callable[[str], Path]) -> None:
    (repo / "evals" / "debugging.json").unlink()
    (hit,) = [f for f in lint_paths([repo / "skills" / "debugging"]).findings]
    assert hit.rule == "eval-artifacts" and hit.line == 14
    # documentation's eval file is evals/comprehension.json: found by skill_name, not by file name,
    # and brought along like one found by name (its own findings are the eval file's, not eval-artifacts)
    documentation = lint_paths([repo / "skills" / "documentation"])
    assert documentation.eval_files == [repo / "evals" / "comprehension.json"]
    assert {f.path.name for f in documentation.findings} == {"comprehension.json"}
    v8 = reshaped("v8")
    state = v8.parent / "audit-state.json"
    data = json.loads(state.read_text())
    data.update(eval_artifacts="planned", eval_state="passing")
    state.write_text(json.dumps(data, indent=2))
    found = [f for f in lint_paths([v8]).findings if f.rule in ("eval-state", "eval-artifacts")]
    assert [(f.rule, f.path.name) for f in found] == [("eval-state", "audit-state.json")]


def test_name_folder_and_marketplace(repo: Path, reshaped: Callable[[str], Path]) -> None:
    moved = repo / "skills" / "types"
    (repo / "skills" / "type-safety").rename(moved)
    assert "name-folder" in rules(lint_paths([moved / "SKILL.md"]).findings)
    assert "marketplace-export" not in rules(lint_paths([moved / "SKILL.md"]).findings)
    found = lint_paths([reshaped("market-head")]).findings
    assert "marketplace-export" in rules(found) and "name-folder" not in rules(found)


def test_grading_source_and_concept_field(repo: Path, reshaped: Callable[[str], Path]) -> None:
    cases = repo / "evals" / "type-safety.json"
    assert not {"grading-source", "concept-field"} & set(rules(lint_paths([cases]).findings))
    edit(cases, '"concept_field": "purpose"', '"concept_field": "analogy"')
    (hit,) = [f for f in lint_paths([cases]).findings if f.rule == "concept-field"]
    assert hit.case_id == "3" and "C3 grades concept field 'purpose'" in hit.message
    # a marketplace export: C2 would be graded against '|' — said so, with the reason
    market = reshaped("market-head")
    evals = market.parent / "evals"
    evals.mkdir()
    (evals / "comprehension.json").write_text(
        json.dumps({"skill_name": "type-safety", "evals": [{"id": 1, "prompt": "p", "dimension": "mental_model"}]})
    )
    (hit,) = [f for f in lint_paths([evals / "comprehension.json"]).findings if f.rule == "grading-source"]
    assert "mental_model" in hit.message and "marketplace export" in hit.message


def test_every_rule_is_tested() -> None:
    text = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    assert [r for r in RULES if f'"{r}"' not in text] == []


def test_far_transfer_r4(repo: Path) -> None:
    cases = repo / "evals" / "type-safety.json"
    assert "far-transfer" not in rules(lint_paths([cases]).findings)  # the 4 far cases are far
    # case 5 (C5, far) borrows the body's own sentence
    edit(cases, "Where does Haskell's", "Rule: prefer `unknown` over `any` always. Where does Haskell's")
    (hit,) = [f for f in lint_paths([cases]).findings if f.rule == "far-transfer"]
    assert hit.case_id == "5" and "'rule prefer unknown over'" in hit.message


def test_c2_scenario(repo: Path) -> None:
    cases = repo / "evals" / "type-safety.json"
    assert "c2-scenario" not in rules(lint_paths([cases]).findings)  # case 2's migration is not in the body
    edit(
        cases,
        '"comprehension_dimension": "C2",\n      "concept_field": "mental_model",\n      "transfer": "far"',
        '"comprehension_dimension": "C2",\n      "concept_field": "mental_model",\n      "transfer": "near"',
    )
    (hit,) = [f for f in lint_paths([cases]).findings if f.rule == "c2-scenario"]
    assert hit.case_id == "2" and "tagged transfer: near" in hit.message
    # a11y case 2 (legacy dimension mental_model → C2) quotes the body: retrieval, not transfer
    (hit,) = [f for f in lint_paths([repo / "evals" / "a11y.json"]).findings if f.rule == "c2-scenario"]
    assert hit.case_id == "2" and "'accessible interaction structural cosmetic'" in hit.message


def test_analogy_drift(tmp_path: Path, ref: Path, reshaped: Callable[[str], Path]) -> None:
    shutil.copytree(ref / "evals", tmp_path / "evals")
    cases = tmp_path / "evals" / "type-safety.json"
    reshaped("v6")  # the same analogy as the cases were written for
    assert "analogy-drift" not in rules(lint_paths([cases]).findings)
    reshaped("market-head")  # the exported analogy is now the passport check (FORMATS.md §1.5)
    (hit,) = [f for f in lint_paths([cases]).findings if f.rule == "analogy-drift"]
    assert hit.case_id == "6" and "'passport check'" in hit.message
