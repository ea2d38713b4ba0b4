"""The four activation case formats, and one clear line for every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from knowmeter.activation import load_activation_cases
from knowmeter.errors import InputError


def test_skill_graph_examples_and_anti_examples_of_a_real_skill(sg_skills: Path) -> None:
    fm = yaml.safe_load((sg_skills / "debugging" / "SKILL.md").read_text().split("---\n")[1])
    cf = load_activation_cases(sg_skills / "debugging", "debugging")
    assert cf.format == "skillgraph-skill"
    assert [c.prompt for c in cf.cases if c.should_trigger] == fm["examples"]
    assert [c.prompt for c in cf.cases if not c.should_trigger] == fm["anti_examples"]
    assert [c.case_id for c in cf.cases][:1] == ["examples-1"] and cf.cases[-1].case_id == "anti-examples-3"


@pytest.mark.parametrize("skill", ["a11y", "debugging", "documentation", "type-safety"])
def test_every_reference_skill_loads(sg_skills: Path, skill: str) -> None:
    cf = load_activation_cases(sg_skills / skill / "SKILL.md", skill)
    assert any(c.should_trigger for c in cf.cases) and any(not c.should_trigger for c in cf.cases)


def test_plain_yaml_with_file_and_case_distractors(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(
        "distractors: [documentation]\n"
        "cases:\n"
        "  - {id: p1, prompt: my test fails in CI, should_trigger: true}\n"
        "  - {id: n1, prompt: write the README, should_trigger: false, distractors: [a11y, documentation],"
        " expected_winner: documentation}\n"
    )
    cf = load_activation_cases(path, "debugging")
    assert cf.format == "plain"
    assert [(c.case_id, c.should_trigger, c.distractors, c.expected_winner) for c in cf.cases] == [
        ("p1", True, ("documentation",), None),
        ("n1", False, ("a11y", "documentation"), "documentation"),
    ]


def test_skill_creator_trigger_eval(tmp_path: Path) -> None:
    path = tmp_path / "trigger-eval.json"
    path.write_text(
        json.dumps([{"query": "fix my flaky test", "should_trigger": True}, {"query": "hi", "should_trigger": False}])
    )
    cf = load_activation_cases(path, "debugging")
    assert cf.format == "skill-creator"
    assert [(c.case_id, c.prompt, c.should_trigger) for c in cf.cases] == [
        ("q1", "fix my flaky test", True),
        ("q2", "hi", False),
    ]


def _routing(tmp_path: Path) -> Path:
    # the shape FORMATS.md §2.1 gives for examples/evals/skill-router.routing.json (no real file is stored)
    data = {
        "skill_name": "skill-router",
        "kind": "routing_eval",
        "subject": "routing",
        "schema_note": "A consuming grader SHOULD implement the router's priority chain",
        "routing_cases": [
            {
                "id": "r1",
                "description": "a failing test routes to debugging",
                "query": {"triggers": ["my test fails"], "paths_touched": ["src/app.ts"], "keywords": ["bisect"]},
                "candidates": ["debugging", "documentation"],
                "expected_winner": "debugging",
                "expected_surface": "triggers",
                "reason": "failure chasing",
            },
            {
                "id": "r2",
                "query": {"keywords": ["readme"]},
                "candidates": ["documentation", "debugging", "a11y"],
                "expected_winner": "documentation",
            },
            {"id": "r3", "query": {"keywords": ["aria"]}, "candidates": ["a11y"], "expected_winner": "a11y"},
        ],
    }
    path = tmp_path / "skill-router.routing.json"
    path.write_text(json.dumps(data))
    return path


def test_routing_cases(tmp_path: Path) -> None:
    cf = load_activation_cases(_routing(tmp_path), "debugging")
    assert cf.format == "skillgraph-routing"
    r1, r2 = cf.cases
    assert r1.prompt == "my test fails. Files touched: src/app.ts. Keywords: bisect."
    assert (r1.should_trigger, r1.distractors, r1.expected_winner) == (True, ("documentation",), "debugging")
    assert (r2.should_trigger, r2.distractors, r2.expected_winner) == (
        False,
        ("documentation", "a11y"),
        "documentation",
    )
    assert cf.notes == ("1 routing case(s) left out: 'debugging' is not among their candidates (r3)",)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("c.yaml", "- {id: a, prompt: x}\n", "c.yaml: case 'a': missing 'should_trigger' (true or false)"),
        (
            "c.yaml",
            "- {prompt: x, should_trigger: yes please}\n",
            "c.yaml: case 1: 'should_trigger' must be true or false",
        ),
        (
            "c.yaml",
            "- {id: a, prompt: x, should_trigger: true, trigger: 1}\n",
            "c.yaml: case 'a': unknown key 'trigger'",
        ),
        (
            "c.yaml",
            "- {id: a, prompt: x, should_trigger: true}\n- {id: a, prompt: y, should_trigger: false}\n",
            "c.yaml: case 'a': id used twice",
        ),
        (
            "c.yaml",
            "- {id: a, prompt: '', should_trigger: true}\n",
            "c.yaml: case 'a': 'prompt' must be non-empty text",
        ),
        (
            "c.json",
            '[{"query": "x", "should_trigger": true},\n {"query": 3, "should_trigger": true}]',
            "c.json: item 2: 'query' must be non-empty text",
        ),
        ("c.json", '{"cases": [\n', "c.json: line 2"),
        ("c.yaml", "cases: {}\n", "c.yaml: top level: expected a non-empty list of cases"),
        (
            "r.json",
            '{"routing_cases": [{"id": "r1", "query": {"keywords": ["k"]}, "candidates": ["a"], '
            '"expected_winner": "b"}]}',
            "r.json: routing case 'r1': expected_winner 'b' is not one of its candidates",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_file_and_case(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_activation_cases(path, "a")
    assert str(exc.value).startswith(f"{tmp_path}/") and message in str(exc.value)
    assert "\n" not in str(exc.value)


def test_missing_file_and_skill_without_examples(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.yaml: activation case file not found"):
        load_activation_cases(tmp_path / "nope.yaml", "a")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    with pytest.raises(InputError, match=r"SKILL\.md: frontmatter: no examples or anti_examples to run"):
        load_activation_cases(tmp_path / "s", "s")


def test_with_description_replaces_a_folded_description_and_keeps_the_rest(tmp_path: Path) -> None:
    from knowmeter.activation import with_description

    text = "---\nname: s\ndescription: >\n  old words\n  more old words\nversion: 1\n---\n# body\ndescription: not me\n"
    new = with_description(tmp_path, text, 'Use when "quoted" things\\happen.')
    fm = yaml.safe_load(new.split("---\n")[1])
    assert fm == {"name": "s", "description": 'Use when "quoted" things\\happen.', "version": 1}
    assert new.endswith("# body\ndescription: not me\n")
    with pytest.raises(InputError, match="no frontmatter"):
        with_description(tmp_path, "# no frontmatter\n", "x")


def test_two_distractors_of_one_name_are_refused(tmp_path: Path, sg_skills: Path) -> None:
    from tests.support.cli import km

    for folder in ("one", "two"):
        (tmp_path / folder / "documentation").mkdir(parents=True)
        (tmp_path / folder / "documentation" / "SKILL.md").write_text("---\nname: documentation\ndescription: d\n---\n")
    (tmp_path / "c.yaml").write_text(
        "- {id: a, prompt: x, should_trigger: true, distractors: [one/documentation, two/documentation]}\n"
    )
    r = km("activation", str(sg_skills / "a11y"), "--cases", "c.yaml", "--output-dir", "out", cwd=tmp_path)
    assert r.returncode == 2 and "c.yaml: case 'a': two distractors are named 'documentation'" in r.stderr


def test_a_skill_saved_with_a_byte_order_mark_and_crlf_is_read(tmp_path: Path, sg_skills: Path) -> None:
    """The real a11y skill as a Windows editor saves it: its name and examples are found (it was
    "the frontmatter has no 'name'", exit 2) and the run measures what the plain file measures."""
    from tests.support.cli import km

    (tmp_path / "a11y").mkdir()
    raw = (sg_skills / "a11y" / "SKILL.md").read_bytes()
    (tmp_path / "a11y" / "SKILL.md").write_bytes(b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n"))
    r = km("activation", "a11y", "--output-dir", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "recall" in r.stdout and "over 4 case(s)" in r.stdout
