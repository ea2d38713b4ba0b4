"""Activation read from the whole trace, and the offline agent's description matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.activation import detect_activations
from knowmeter.errors import InputError
from knowmeter.executors import SkillInstall
from knowmeter.executors._offline import choose_skill, description_score, skill_description, skill_name
from knowmeter.traces import MessageEvent, ToolCallEvent, Trace


def _trace(*calls: tuple[str, dict[str, object]]) -> Trace:
    t = Trace(source="test")
    t.events.append(MessageEvent("user", "q", 0))
    for i, (tool, inp) in enumerate(calls):
        t.events.append(ToolCallEvent(f"c{i}", tool, dict(inp), i + 1))
    return t


def test_a_skill_call_after_other_tools_still_counts() -> None:
    # skill-creator's run_eval stops at the first non-Skill tool call; the whole trace is read here
    t = _trace(("Grep", {"pattern": "x"}), ("Bash", {"command": "ls"}), ("Skill", {"skill": "debugging"}))
    d = detect_activations(t, ["debugging", "a11y"])
    assert d.order == ("debugging",) and d.skill_tool == {"debugging": True, "a11y": False}


def test_reads_of_skill_md_and_which_counts() -> None:
    t = _trace(
        ("Read", {"file_path": "/h/.claude/skills/a11y/SKILL.md"}),
        ("Bash", {"command": "sed -n 1,80p .agents/skills/debugging/SKILL.md"}),
        ("Skill", {"skill": "plugin:debugging"}),
        ("Read", {"file_path": "/h/.claude/skills/a11y/references/x.md"}),
    )
    either = detect_activations(t, ["debugging", "a11y"])
    assert either.order == ("a11y", "debugging") and either.first == "a11y"
    assert either.read == {"debugging": True, "a11y": True}
    assert detect_activations(t, ["debugging", "a11y"], "skill-tool").order == ("debugging",)
    assert detect_activations(t, ["debugging", "a11y"], "read").order == ("a11y", "debugging")
    assert detect_activations(_trace(), ["a11y"]).first is None


def _skill(name: str, description: str) -> SkillInstall:
    return SkillInstall(name, None, f"---\nname: {name}\ndescription: {description}\n---\nbody\n")


def test_offline_agent_loads_the_best_matching_description_or_none() -> None:
    debugging = _skill("debugging", '"Use when a test is failing. Do NOT use for refactor or documentation."')
    docs = _skill("documentation", "Use when writing reference docs and a README.")
    assert choose_skill("my test is failing in CI", [debugging, docs]) is debugging
    assert choose_skill("update the README reference docs", [debugging, docs]) is docs
    assert choose_skill("what is the weather", [debugging, docs]) is None
    # words after "Do NOT use" count against the skill
    assert description_score("refactor while the test is green", "Use when a test fails. Do NOT use for refactor") == 0


def test_offline_skill_delivery_in_a_trace_and_a_bad_delivery_option(tmp_path: Path) -> None:
    import anyio

    from knowmeter.executors import ExecRequest, ExecutorSpec, create_executor

    agent = create_executor(ExecutorSpec("offline", None, {"delivery": "skill"}))
    debugging = _skill("debugging", "Use when a test is failing.")
    docs = _skill("documentation", "Use when writing reference docs.")
    request = ExecRequest(
        "t", "s", "my test is failing", debugging.text, workspace=tmp_path, skill=debugging, extra_skills=(docs,)
    )
    result = anyio.run(agent.run, request)
    assert detect_activations(result.trace, ["debugging", "documentation"]).order == ("debugging",)
    request.prompt = "how is the weather"
    assert detect_activations(anyio.run(agent.run, request).trace, ["debugging", "documentation"]).order == ()
    with pytest.raises(InputError, match="option delivery must be system or skill"):
        create_executor(ExecutorSpec("offline", None, {"delivery": "bogus"}))


def test_offline_agent_reads_a_skill_saved_with_a_byte_order_mark(sg_skills: Path) -> None:
    """The real debugging skill with a byte-order mark: its frontmatter name and description are
    found (the description was the first line, "---"), so the same prompt loads it."""
    text = (sg_skills / "debugging" / "SKILL.md").read_text()
    plain, marked = SkillInstall("x", None, text), SkillInstall("x", None, "\ufeff" + text)
    assert (skill_name(marked), skill_description(marked)) == ("debugging", skill_description(plain))
    docs = _skill("documentation", "Use when writing reference docs and a README.")
    assert choose_skill("my test is failing in CI", [marked, docs]) is marked
