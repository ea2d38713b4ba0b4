"""Which installed skills an agent loaded, read from the whole trace (every tool call, not only
the first): a ``Skill`` tool call naming the skill (Claude Code; ``plugin:name`` counts as
``name``), or a read of its ``SKILL.md`` — a ``Read`` of ``…/skills/<name>/SKILL.md`` or a shell
command naming that path (how codex, which has no Skill tool, loads a skill). ``counts`` says
which of the two make an activation; both are always recorded."""

from __future__ import annotations

from typing import Literal

from knowmeter.store import Detection
from knowmeter.traces import ToolCallEvent, Trace

__all__ = ["COUNTS", "Counts", "Detection", "detect_activations"]

Counts = Literal["skill-tool", "read", "either"]
COUNTS: tuple[Counts, ...] = ("skill-tool", "read", "either")
_SHELL_KEYS = ("command", "cmd")


def _skill_called(call: ToolCallEvent, skill: str) -> bool:
    if call.tool != "Skill":
        return False
    named = str(call.input.get("skill") or call.input.get("name") or "").strip().lstrip("/")
    return named == skill or named.endswith(":" + skill)


def _skill_read(call: ToolCallEvent, skill: str) -> bool:
    target = f"skills/{skill}/SKILL.md"
    if call.tool == "Read":
        return str(call.input.get("file_path") or call.input.get("path") or "").endswith(target)
    command = next((call.input[k] for k in _SHELL_KEYS if k in call.input), None)
    if isinstance(command, list):
        command = " ".join(str(c) for c in command)
    return isinstance(command, str) and target in command


def detect_activations(trace: Trace, skills: list[str], counts: Counts = "either") -> Detection:
    """How each of ``skills`` (frontmatter names) was loaded in ``trace``; see the module docstring."""
    tool = dict.fromkeys(skills, False)
    read = dict.fromkeys(skills, False)
    order: list[str] = []
    for event in trace.events:
        if not isinstance(event, ToolCallEvent):
            continue
        for skill in skills:
            by_tool, by_read = _skill_called(event, skill), _skill_read(event, skill)
            tool[skill] = tool[skill] or by_tool
            read[skill] = read[skill] or by_read
            counted = by_tool if counts == "skill-tool" else by_read if counts == "read" else by_tool or by_read
            if counted and skill not in order:
                order.append(skill)
    return Detection(skill_tool=tool, read=read, order=tuple(order))
