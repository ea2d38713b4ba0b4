"""``application`` cases get criteria that fit them (issue 29): an ownership prompt ("which skill
owns …", accept or hand off) is graded on naming the owner skill and why, a scenario prompt on
applying the skill's governing rule — never on C8's "≥ 3 Verification checklist items applied to
the artifact", which a correct answer to a prompt with no artifact cannot meet. An explicit
``comprehension_dimension: C8`` case (an artifact is given) stays C8."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from knowmeter.comprehension import GraderCase, load_inputs
from knowmeter.skillgraph import lint_paths

CASES = [
    {"id": 1, "dimension": "application",
     "prompt": "A team must design the request and response schema of a new payments endpoint. Which skill owns that?"},
    {"id": 2, "dimension": "application",
     "prompt": "A teammate types a parsed webhook body with `as Payload`. According to type-safety, what must change?"},
    {"id": 3, "dimension": "application", "comprehension_dimension": "C8", "concept_field": None,
     "prompt": "Review this snippet: `const data: any = await res.json(); return data as User;`"},
    {"id": 4, "dimension": "application",
     "prompt": "Should type-safety accept this database column-type question or hand it off?"},
]  # fmt: skip


def _inputs(tmp_path: Path, skill_graph: Path) -> dict[str, GraderCase]:
    skill = tmp_path / "skills" / "type-safety"
    skill.mkdir(parents=True)
    shutil.copy(skill_graph / "skills" / "type-safety" / "SKILL.md", skill / "SKILL.md")
    evals = tmp_path / "evals" / "type-safety.json"
    evals.parent.mkdir()
    evals.write_text(json.dumps({"skill_name": "type-safety", "evals": CASES}))
    inputs = load_inputs(skill / "SKILL.md", evals, n=6)
    return {c.case_id: c for c in inputs.cases}


def test_ownership_and_scenario_cases_have_their_own_criteria(tmp_path: Path, skill_graph: Path) -> None:
    cases = _inputs(tmp_path, skill_graph)
    owner, scenario, c8, handoff = (cases[i] for i in ("1", "2", "3", "4"))
    for case in (owner, handoff):
        assert case.application == "ownership" and case.dimension == "C8"
        ids = [b.id for b in case.behaviors]
        assert ids == ["names_owner_skill", "explains_why_it_owns", "no_wrong_owner", "no_work_in_wrong_voice"]
        # graded against who owns what: the Do NOT Use When table and the relations
        assert case.concept_name == "## Do NOT Use When + relations"
        assert "`api-design`" in case.concept_text and "relations.boundary: api-design" in case.concept_text
    assert scenario.application == "scenario"
    assert [b.id for b in scenario.behaviors][:3] == [
        "identifies_governing_rule",
        "applies_to_specifics",
        "reaches_prescribed_action",
    ]
    # no application case is asked for Verification checklist items on an artifact it does not have
    for case in (owner, scenario, handoff):
        assert "applies_three_checklist_items" not in {b.id for b in case.behaviors}
    # an explicit C8 case (the research's: an artifact to review) keeps C8's criteria
    assert c8.application is None and c8.concept_name == "## Verification"
    assert "applies_three_checklist_items" in {b.id for b in c8.behaviors}
    assert owner.describe()["application"] == "ownership"


def test_lint_checks_an_ownership_case_against_what_it_grades(tmp_path: Path, skill_graph: Path) -> None:
    _inputs(tmp_path, skill_graph)
    skill = tmp_path / "skills" / "type-safety" / "SKILL.md"
    text = skill.read_text()
    cut = text.index("## Do NOT Use When")
    skill.write_text(text[:cut] + text[text.index("## Key Sources") :])
    text = skill.read_text()
    start = text.index("relations:")
    skill.write_text(text[:start] + text[text.index("concept:") :])
    found = [f for f in lint_paths([tmp_path / "evals" / "type-safety.json"]).findings if f.rule == "grading-source"]
    messages = " | ".join(f.message for f in found)
    assert "cases 1, 4: an application (ownership) case grades against ## Do NOT Use When + relations" in messages
    assert "case 2" not in messages  # a scenario case grades against the body, which it has
