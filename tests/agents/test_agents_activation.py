"""``knowmeter activation`` with the real claude CLI (directly and through the Claude Agent SDK)
and codex against the scripted model: the model calls
the Skill tool on some prompts and not on others, and calls it for a distractor on one; the
measured recall, false activations and precision are exactly what was scripted, with four tasks
at a time and no task seeing another case's skills."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from knowmeter.activation import Target, run_activation
from tests.support.agents import executor_options
from tests.support.mock_model import ServerFactory

pytestmark = [pytest.mark.agents, pytest.mark.slow]

SKILL, DISTRACTOR = "fruit-finder", "veg-finder"
DISTRACTOR_MARK = "TURNIP-5521"  # only in the distractor's description: a request holding it saw that skill


def _skill(root: Path, name: str, description: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\nbody\n")


def _calls(skill: str | None) -> dict[str, Any]:
    steps = [{"tool": {"name": "Skill", "input": {"skill": skill}}}] if skill else []
    return {"anthropic": [*steps, {"text": "done"}]}


#: case id → (prompt marker, should_trigger, skill the model is scripted to load, installs the distractor)
CASES = {
    "p1": ("APRICOT-01", True, SKILL, True),
    "p2": ("APRICOT-02", True, SKILL, False),
    "p3": ("APRICOT-03", True, None, False),  # missed
    "n1": ("APRICOT-04", False, SKILL, False),  # fired when it should not
    "n2": ("APRICOT-05", False, DISTRACTOR, True),  # the distractor won
    "n3": ("APRICOT-06", False, None, True),
}


@pytest.mark.parametrize("executor", ["claude", "claude-sdk"])
def test_measured_activation_is_what_the_model_was_scripted_to_do(
    executor: str, tmp_path: Path, mock_server: ServerFactory
) -> None:
    if executor == "claude-sdk":
        pytest.importorskip("claude_agent_sdk")
    skills = tmp_path / "skills"
    _skill(skills, SKILL, "Find fruit words in text files.")
    _skill(skills, DISTRACTOR, f"Find vegetable words ({DISTRACTOR_MARK}).")
    cases = [
        {"id": cid, "prompt": f"Please look at {marker}.", "should_trigger": should}
        | ({"distractors": [DISTRACTOR]} if with_d else {})
        for cid, (marker, should, _, with_d) in CASES.items()
    ]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump({"cases": cases}))
    srv = mock_server({marker: _calls(loads) for marker, _, loads, _ in CASES.values()} | {"": _calls(None)})
    run_dir, report = run_activation(
        Target(skill=f"skills/{SKILL}", case_files=("cases.yaml",)),
        base_dir=tmp_path,
        executor=executor,
        executor_options=executor_options(executor, srv),
        repeat=2,
        concurrency=4,
        output_dir=str(tmp_path / "out"),
        timeout_s=120,
    )
    (arm,) = report.arms
    assert arm.errors == 0, [json.loads(x)["exec"]["error"] for x in run_dir.results_file.read_text().splitlines()]
    assert (arm.recall.successes, arm.recall.trials) == (4, 6)  # p1, p2 fire; p3 does not
    assert (arm.false_activation_rate.successes, arm.false_activation_rate.trials) == (2, 6)  # n1
    assert (arm.precision.successes, arm.precision.trials) == (4, 6)
    assert arm.f1 == pytest.approx(2 * 4 / (2 * 4 + 2 + 2))
    confused = {c.case_id: c for c in arm.confusion}
    assert set(confused) == {"p3", "n1"} and confused["n1"].how == ["skill-tool"]
    # n2: the model loaded the distractor, which the trace shows and does not count for the skill
    records = [json.loads(line) for line in run_dir.results_file.read_text().splitlines()]
    n2 = [r["activation"] for r in records if r["sample_id"] == "n2"]
    assert (
        n2
        == [
            {
                "skill_tool": {SKILL: False, DISTRACTOR: True},
                "read": {SKILL: False, DISTRACTOR: False},
                "order": [DISTRACTOR],
            }
        ]
        * 2
    )
    # no cross-talk: every request saw the distractor exactly when its case installs it, and the skill always
    seen: dict[str, set[bool]] = {}
    for req in srv.model_requests():
        body = json.dumps(req["body"])
        marker = next((m for m, *_ in CASES.values() if m in body), None)
        if marker is None:
            continue
        assert SKILL in body
        seen.setdefault(marker, set()).add(DISTRACTOR_MARK in body)
    assert seen == {marker: {with_d} for marker, _, _, with_d in CASES.values()}
    # four at a time, each in its own sandbox
    assert len({r["exec"]["trace"]["meta"]["cwd"] for r in records}) == len(records) == 12


def test_description_ab_on_the_real_cli(tmp_path: Path, mock_server: ServerFactory) -> None:
    # the model loads the skill whenever its listing shows B's description: recall and false
    # activations both rise from 0 to 1, and rising false activations make it a REGRESS
    skills = tmp_path / "skills"
    _skill(skills, SKILL, "Find fruit words in text files.")
    cases = [{"id": f"p{i}", "prompt": f"find fruit {i}", "should_trigger": True} for i in range(5)]
    cases += [{"id": f"n{i}", "prompt": f"say hello {i}", "should_trigger": False} for i in range(5)]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    srv = mock_server({"MANGO-B": _calls(SKILL), "": _calls(None)})
    _, report = run_activation(
        Target(skill=f"skills/{SKILL}", case_files=("cases.yaml",), description="Find fruit words (MANGO-B)."),
        base_dir=tmp_path,
        executor="claude",
        executor_options=executor_options("claude", srv),
        repeat=1,
        concurrency=4,
        output_dir=str(tmp_path / "out"),
        timeout_s=120,
    )
    a, b = report.arms
    assert (a.recall.successes, b.recall.successes, a.false_activation_rate.successes) == (0, 5, 0)
    assert b.false_activation_rate.successes == 5 and a.errors == b.errors == 0
    assert report.verdict == "REGRESS" and report.exit_code == 1
    recall, false_act = report.comparisons[0].changes
    assert (recall.treatment_only, false_act.treatment_only) == (5, 5) and recall.mcnemar_p == pytest.approx(0.0625)


def test_codex_loads_a_skill_by_reading_its_skill_md(tmp_path: Path, mock_server: ServerFactory) -> None:
    # codex has no Skill tool: it is told where its skills are and reads the SKILL.md with a shell command
    skills = tmp_path / "skills"
    _skill(skills, SKILL, "Find fruit words in text files.")
    cases = [
        {"id": "p1", "prompt": "look at APRICOT-01", "should_trigger": True},
        {"id": "n1", "prompt": "look at APRICOT-02", "should_trigger": False},
    ]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    read = {"openai": [{"shell": f"cat .agents/skills/{SKILL}/SKILL.md"}, {"text": "done"}]}
    srv = mock_server({"APRICOT-01": read, "": {"openai": [{"text": "done"}]}})
    _, report = run_activation(
        Target(skill=f"skills/{SKILL}", case_files=("cases.yaml",)),
        base_dir=tmp_path,
        executor="codex",
        executor_options=executor_options("codex", srv),
        repeat=2,
        concurrency=4,
        output_dir=str(tmp_path / "out"),
        timeout_s=120,
    )
    (arm,) = report.arms
    assert arm.errors == 0
    assert (arm.recall.successes, arm.recall.trials, arm.false_activation_rate.successes) == (2, 2, 0)
    assert report.counts == "either" and not arm.confusion


def test_late_skill_calls_and_reads_count_as_configured(tmp_path: Path, mock_server: ServerFactory) -> None:
    # skill-creator's run_eval stops at the first non-Skill tool call; here the whole trace is read
    skills = tmp_path / "skills"
    _skill(skills, SKILL, "Find fruit words in text files.")
    cases = [
        {"id": "late", "prompt": "look at APRICOT-01", "should_trigger": True},
        {"id": "read", "prompt": "look at APRICOT-02", "should_trigger": True},
    ]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    late = {"anthropic": [{"shell": "ls"}, {"tool": {"name": "Skill", "input": {"skill": SKILL}}}, {"text": "done"}]}
    read = {
        "anthropic": [
            {"tool": {"name": "Grep", "input": {"pattern": "fruit"}}},
            {"tool": {"name": "Read", "input": {"file_path": f"{{cwd}}/../home/.claude/skills/{SKILL}/SKILL.md"}}},
            {"text": "done"},
        ]
    }
    srv = mock_server({"APRICOT-01": late, "APRICOT-02": read, "": _calls(None)})
    for counts, fired in (("either", 4), ("skill-tool", 2), ("read", 2)):
        run_dir, report = run_activation(
            Target(skill=f"skills/{SKILL}", case_files=("cases.yaml",), counts=counts),  # type: ignore[arg-type]
            base_dir=tmp_path,
            executor="claude",
            executor_options=executor_options("claude", srv),
            repeat=2,
            concurrency=4,
            output_dir=str(tmp_path / "out"),
            timeout_s=120,
        )
        (arm,) = report.arms
        assert arm.errors == 0 and arm.recall.successes == fired, (counts, arm.confusion)
    # the read really loaded the installed skill (its text came back to the model)
    records = [json.loads(x) for x in run_dir.results_file.read_text().splitlines()]
    reads = [e for r in records if r["sample_id"] == "read" for e in r["exec"]["trace"]["events"]]
    assert any(e["kind"] == "tool_result" and "Find fruit words" in str(e.get("output")) for e in reads)
