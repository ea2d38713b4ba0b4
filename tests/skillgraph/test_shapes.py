"""Every SKILL.md shape Skill Graph has shipped is read as that shape and linted by that shape's
rules: v8 with or without its sidecar (found by ``subject`` / ``public`` too), marketplace exports
of both exporters (no source-only section rule), router / overlay / workflow types; an export's
understanding fields lost as the literal ``'|'`` are read from its ``## Concept of the skill``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from knowmeter.comprehension import load_inputs
from knowmeter.errors import InputError
from knowmeter.skillgraph import Dimension, lint_paths, load_skill


def rules(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in lint_paths([path]).findings:
        out.setdefault(f.rule, []).append(f.message)
    return out


def test_a_head_export_is_a_v8_export_and_lints_clean_of_source_rules(reshaped: Callable[[str], Path]) -> None:
    path = reshaped("market-head-concept")
    skill = load_skill(path)
    assert (skill.shape, skill.export) == ("v8", "v8")
    found = rules(path)
    # no "missing '## Philosophy' (v4 type requires it)": Skill Graph's tools pass its own exports
    assert "required-section" not in found and "empty-section" not in found
    assert list(found) == ["marketplace-export"]
    assert "read from the body section '## Concept of the skill'" in found["marketplace-export"][0]


def test_an_exports_lost_fields_come_from_its_concept_section(reshaped: Callable[[str], Path]) -> None:
    skill = load_skill(reshaped("market-head-concept"))
    assert set(skill.blank_fields) == {"mental_model", "boundary", "misconception"}
    mental = skill.concept["mental_model"]
    assert mental.key == "## Concept of the skill"
    assert mental.text.startswith(skill.section("Concept of the skill").text.strip()[:40])  # type: ignore[union-attr]
    assert skill.concept_text("analogy") == "passport check"  # a field the exporter kept is used as is
    assert skill.grading_text(Dimension.C2) is not None


def test_labelled_concept_lines_give_each_field_its_own_text(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "demo"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: demo\ndescription: d\nmetadata:\n  subject: design\n  mental_model: "|"\n'
        '  misconception: "|"\n---\n# Demo\n\n## Concept of the skill\n\n'
        "**Mental model:** two layers meet at the boundary.\n**Common misconception:** a cast is a check.\n"
    )
    skill = load_skill(folder)
    assert skill.concept_text("mental_model") == "two layers meet at the boundary."
    assert skill.concept_text("misconception") == "a cast is a check."


def test_comprehend_grades_an_export_from_its_body_or_refuses_in_one_line(
    reshaped: Callable[[str], Path], tmp_path: Path
) -> None:
    cases = {
        "skill_name": "type-safety",
        "evals": [{"id": 1, "prompt": "How do types work?", "dimension": "mental_model"}],
    }
    path = reshaped("market-head-concept")
    (path.parent / "evals").mkdir()
    (path.parent / "evals" / "comprehension.json").write_text(json.dumps(cases))
    inputs = load_inputs(path, None, n=6)
    assert inputs.cases[0].concept_text == load_skill(path).concept_text("mental_model")
    bare = reshaped("market-head")  # the same export without the body section
    with pytest.raises(InputError) as err:
        load_inputs(bare, None, n=6)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{bare}: marketplace export: mental_model")
    assert "no '## Concept of the skill' section to read them from: grade the source SKILL.md" in message


def test_a_v8_skill_without_its_sidecar_is_v8(reshaped: Callable[[str], Path]) -> None:
    path = reshaped("v8")
    (path.parent / "audit-state.json").unlink()
    skill = load_skill(path)
    assert skill.shape == "v8" and skill.audit_state is None
    found = rules(path)
    assert not any("v4" in m or "'## Philosophy'" in m for m in found.get("required-section", []))
    assert "frontmatter-schema" not in found


@pytest.mark.parametrize(
    ("kind", "sections"),
    [
        ("router", ("Coverage", "Routing Rules", "Do NOT Use When")),
        ("overlay", ("Coverage", "Overlay Rules", "Extends", "Do NOT Use When")),
        ("workflow", ("Coverage", "Philosophy", "Verification", "Do NOT Use When", "Workflow")),
    ],
)
def test_each_type_of_a_v056_export_and_source(tmp_path: Path, kind: str, sections: tuple[str, ...]) -> None:
    body = "\n".join(
        f"## {s}\n\n{'Enough words to be more than fifty characters of text here. ' * 2}\n" for s in sections
    )
    packed = json.dumps({"schema_version": 4, "type": kind, "mental_model": "|"})
    export = tmp_path / "market" / "skills" / f"x-{kind}"
    export.mkdir(parents=True)
    (export / "SKILL.md").write_text(
        f"---\nname: x-{kind}\ndescription: d\nmetadata:\n  metadata: '{packed}'\n---\n{body}"
    )
    skill = load_skill(export)
    assert (skill.export, skill.archetype, skill.shape) == ("v0.5.6", kind, "v6")
    assert "required-section" not in rules(export)
    source = tmp_path / "src" / "skills" / f"x-{kind}"
    source.mkdir(parents=True)
    (source / "SKILL.md").write_text(
        f"---\nschema_version: 4\nname: x-{kind}\ntype: {kind}\ndescription: d\n---\n{body}"
    )
    assert "required-section" not in rules(source)
    (source / "SKILL.md").write_text(f"---\nschema_version: 4\nname: x-{kind}\ntype: {kind}\ndescription: d\n---\n")
    assert len(rules(source)["required-section"]) == len(sections)


@pytest.mark.parametrize(
    "marker",
    [
        {"subject": "design"},
        {"public": True},
        {"subjects": ["design"]},
        {"taxonomy_domain": "quality/types"},
        {"project": [{"handle": "x"}]},
        {"concept_boundary": "not pricing"},
        {"relations": {"suppresses": ["other"]}},
        {"schema_version": 8},
    ],
)
def test_each_v8_marker_makes_a_skill_v8(tmp_path: Path, marker: dict[str, object]) -> None:
    import yaml

    folder = tmp_path / "skills" / "x"
    folder.mkdir(parents=True)
    front = yaml.safe_dump({"name": "x", "description": "d", **marker})
    (folder / "SKILL.md").write_text(f"---\n{front}---\n# X\n")
    assert load_skill(folder).shape == "v8"
