"""Where a skill starts in a trace: the three skill-start markers.

- ``skill_tool``    — the main agent calls the ``Skill`` tool (input ``skill`` or ``name``; the
  2.0.x ``SlashCommand`` tool with ``command: "/x args"`` counts too);
- ``slash_command`` — a user message that *is* a slash-command echo
  (``<command-message>…</command-message><command-name>/x</command-name>``), i.e. the person typed
  ``/x``; Claude Code's own UI commands (``/clear``, ``/model``, ``/compact`` …) are not skills;
- ``skill_md_read`` — the main agent reads an installed skill's instructions: a ``Read`` of
  ``…/.claude/skills/<x>/SKILL.md`` (also ``.codex`` / ``.agents`` skill roots, Codex's
  ``skills/.system/<x>``, plugin skills under ``.claude/plugins/…/skills/<x>``) or a shell
  ``cat`` / ``sed`` / ``head`` … of such a file (how Codex loads a skill).

Only the transcript's own agent starts segments (the segmenter checks that): a subagent's events
belong to the segment of the ``Task`` call that spawned it.
"""

from __future__ import annotations

import re
from typing import Literal

from knowmeter.traces import Event, MessageEvent, ToolCallEvent

Marker = Literal["skill_tool", "slash_command", "skill_md_read"]

#: Claude Code commands that act on the session or the UI rather than run instructions
#: (their echo is followed by ``<local-command-stdout>``): never skill starts.
BUILTIN_COMMANDS = frozenset(
    {
        "add-dir",
        "agents",
        "bashes",
        "bug",
        "clear",
        "compact",
        "config",
        "context",
        "cost",
        "doctor",
        "exit",
        "export",
        "feedback",
        "help",
        "hooks",
        "ide",
        "install-github-app",
        "login",
        "logout",
        "mcp",
        "memory",
        "migrate-installer",
        "model",
        "output-style",
        "permissions",
        "plugin",
        "plugins",
        "privacy-settings",
        "quit",
        "release-notes",
        "resume",
        "rewind",
        "sandbox",
        "settings",
        "status",
        "statusline",
        "terminal-setup",
        "todos",
        "upgrade",
        "usage",
        "vim",
    }
)

_COMMAND_NAME = re.compile(r"<command-name>\s*/?([^<\s]+)\s*</command-name>")
_SKILL_MD = re.compile(
    r"(?:^|/)\.(?:claude|codex|agents)/(?:[^\s'\"]*/)?skills/(?:\.system/)?"
    r"([^/\s'\"]+)/SKILL\.md$"
)
_SHELL_SKILL_READ = re.compile(
    r"(?:^|[\s;&|(])(?:cat|sed|head|tail|less|more|bat|nl)\s[^;&|>]*?"
    r"((?:[^\s'\";&|]*/)?\.(?:claude|codex|agents)/(?:[^\s'\";&|]*/)?skills/(?:\.system/)?"
    r"[^/\s'\";&|]+/SKILL\.md)"
)


def skill_of_path(path: str) -> str | None:
    """The skill whose instructions ``path`` is (``…/.claude/skills/<x>/SKILL.md`` → ``x``)."""
    m = _SKILL_MD.search(path.strip().strip("'\"").replace("\\", "/"))
    return m.group(1) if m else None


def _skill_name(raw: object) -> str | None:
    if not isinstance(raw, str):
        return None
    name = raw.strip().lstrip("/").split(maxsplit=1)[0] if raw.strip().lstrip("/") else ""
    return name or None


def skill_start(event: Event) -> tuple[str, Marker] | None:
    """``(skill, marker)`` when ``event`` starts a skill segment, else None."""
    if isinstance(event, ToolCallEvent):
        return _call_start(event)
    if isinstance(event, MessageEvent) and event.role == "user" and "<command-name>" in event.text:
        if not event.text.lstrip().startswith(("<command-message>", "<command-name>")):
            return None  # a summary or a quote that mentions a tag, not the echo of a typed command
        m = _COMMAND_NAME.search(event.text)
        if m and m.group(1) not in BUILTIN_COMMANDS:
            return m.group(1), "slash_command"
    return None


def _call_start(call: ToolCallEvent) -> tuple[str, Marker] | None:
    inp = call.input
    if call.tool == "Skill":
        name = _skill_name(inp.get("skill", inp.get("name")))
        return (name, "skill_tool") if name else None
    if call.source_tool == "SlashCommand":
        name = _skill_name(inp.get("command"))
        return (name, "skill_tool") if name and name not in BUILTIN_COMMANDS else None
    if call.tool == "Read":
        raw = inp.get("file_path", inp.get("path"))
        skill = skill_of_path(raw) if isinstance(raw, str) else None
        return (skill, "skill_md_read") if skill else None
    if call.tool == "Bash":
        command = inp.get("command")
        if isinstance(command, str) and "SKILL.md" in command:
            m = _SHELL_SKILL_READ.search(command)
            skill = skill_of_path(m.group(1)) if m else None
            return (skill, "skill_md_read") if skill else None
    return None
