"""Skill-start markers: Skill tool calls, typed slash commands, reads of an installed SKILL.md."""

from __future__ import annotations

import pytest

from knowmeter.observe import skill_of_path, skill_start
from knowmeter.traces import MessageEvent, ToolCallEvent


def call(tool: str, inp: dict[str, object], source: str | None = None) -> ToolCallEvent:
    return ToolCallEvent("toolu_1", tool, dict(inp), 1, source_tool=source or tool)


@pytest.mark.parametrize(
    ("inp", "skill"),
    [
        ({"skill": "pdf"}, "pdf"),
        ({"name": "deploy"}, "deploy"),
        ({"skill": "/review-pr"}, "review-pr"),
        ({"skill": "acme:lint", "args": "src"}, "acme:lint"),
    ],
)
def test_skill_tool_call_starts_its_skill(inp: dict[str, object], skill: str) -> None:
    assert skill_start(call("Skill", inp)) == (skill, "skill_tool")


def test_skill_tool_without_a_name_and_other_tools_start_nothing() -> None:
    assert skill_start(call("Skill", {})) is None
    assert skill_start(call("Grep", {"pattern": "SKILL.md"})) is None


def test_claude_2_0_slash_command_tool_counts_but_not_ui_commands() -> None:
    assert skill_start(call("SlashCommand", {"command": "/changelog v2"}, "SlashCommand")) == (
        "changelog",
        "skill_tool",
    )
    assert skill_start(call("SlashCommand", {"command": "/compact"}, "SlashCommand")) is None


def test_typed_slash_command_echo_starts_the_command() -> None:
    echo = (
        "<command-message>review-pr is running…</command-message>\n<command-name>/review-pr</command-name>\n"
        "<command-args>42</command-args>"
    )
    assert skill_start(MessageEvent("user", echo, injected=True)) == ("review-pr", "slash_command")
    older = "<command-name>/pdf</command-name>\n<command-message>pdf</command-message>\n<command-args></command-args>"
    assert skill_start(MessageEvent("user", older, injected=True)) == ("pdf", "slash_command")


@pytest.mark.parametrize("name", ["clear", "compact", "model", "context", "cost", "resume"])
def test_claude_code_ui_commands_are_not_skills(name: str) -> None:
    echo = f"<command-name>/{name}</command-name>\n<command-message>{name}</command-message>"
    assert skill_start(MessageEvent("user", echo, injected=True)) is None


def test_a_tag_quoted_inside_other_text_or_said_by_the_agent_is_not_an_invocation() -> None:
    summary = "Earlier the user ran <command-name>/deploy</command-name> and it failed."
    assert skill_start(MessageEvent("user", summary, injected=True)) is None
    said = "<command-name>/deploy</command-name>"
    assert skill_start(MessageEvent("assistant", said)) is None


@pytest.mark.parametrize(
    ("path", "skill"),
    [
        ("/home/u/proj/.claude/skills/pdf/SKILL.md", "pdf"),
        (".claude/skills/review-pr/SKILL.md", "review-pr"),
        ("/home/u/.claude/plugins/cache/acme/tools/1.0.0/skills/lint/SKILL.md", "lint"),
        ("/root/.codex/skills/.system/imagegen/SKILL.md", "imagegen"),
        ("/repo/.agents/skills/triage/SKILL.md", "triage"),
        ("/home/u/proj/docs/skills/pdf/SKILL.md", None),
        ("/home/u/proj/.claude/skills/pdf/reference.md", None),
        ("/home/u/proj/.claude/skills/SKILL.md", None),
    ],
)
def test_skill_md_paths(path: str, skill: str | None) -> None:
    assert skill_of_path(path) == skill
    expected = (skill, "skill_md_read") if skill else None
    assert skill_start(call("Read", {"file_path": path})) == expected


@pytest.mark.parametrize(
    ("command", "skill"),
    [
        ("cat /root/.codex/skills/.system/imagegen/SKILL.md", "imagegen"),
        ("sed -n '1,200p' .agents/skills/triage/SKILL.md", "triage"),
        ("cd /repo && head -50 .claude/skills/pdf/SKILL.md | cat", "pdf"),
        ("echo '# new' > .claude/skills/pdf/SKILL.md", None),
        ("ls .claude/skills/pdf/SKILL.md", None),
        ("grep -n deploy .claude/skills/pdf/SKILL.md", None),
    ],
)
def test_shell_reads_of_a_skill_md(command: str, skill: str | None) -> None:
    expected = (skill, "skill_md_read") if skill else None
    assert skill_start(call("Bash", {"command": command})) == expected
