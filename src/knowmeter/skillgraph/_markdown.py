"""SKILL.md text → frontmatter text, body and sections by heading, with 1-based file lines."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from knowmeter.skillgraph._errors import SkillFormatError

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True, slots=True)
class Section:
    """One heading of the body and the text under it (up to the next heading of the same or a
    higher level). ``line`` is the heading's 1-based line in the file; ``end_line`` the last line
    of the section."""

    title: str
    level: int
    line: int
    end_line: int
    text: str

    @property
    def anchors(self) -> frozenset[str]:
        """The heading's anchor slugs (see :func:`slugs`)."""
        return slugs(self.title)


def slugs(title: str) -> frozenset[str]:
    """Anchor slugs a heading answers to: Skill Graph's (lower-case, every run of
    non-alphanumerics one ``-``, trimmed) and GitHub's (punctuation dropped, each space one
    ``-``), so ``## `any` vs `unknown` `` and ``## Soundness — What …`` resolve either way."""
    lower = title.strip().lower()
    collapsed = re.sub(r"[^a-z0-9]+", "-", lower).strip("-")
    github = re.sub(r"[^\w\- ]", "", lower, flags=re.ASCII).replace(" ", "-")
    return frozenset(s for s in (collapsed, github) if s)


@dataclass(frozen=True, slots=True)
class SplitSkill:
    """A SKILL.md cut at its frontmatter fences."""

    frontmatter: str
    frontmatter_line: int  # file line of the first frontmatter line (the line after ``---``)
    body: str
    body_line: int  # file line of the first body line


def split_frontmatter(text: str, path: Path) -> SplitSkill:
    """Cut ``text`` into frontmatter and body; a missing or unclosed frontmatter raises."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError(
            path, "no YAML frontmatter: a SKILL.md starts with a '---' line, the fields, and a closing '---'", line=1
        )
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return SplitSkill("".join(lines[1:i]), 2, "".join(lines[i + 1 :]), i + 2)
    raise SkillFormatError(path, "frontmatter is not closed: add a '---' line after the last field", line=1)


def parse_sections(body: str, first_line: int) -> tuple[Section, ...]:
    """The ATX headings of ``body`` (code fences skipped) with their text; ``first_line`` is the
    file line of the body's first line."""
    lines = body.splitlines()
    heads: list[tuple[int, int, str]] = []  # (index, level, title)
    fence: str | None = None
    for i, line in enumerate(lines):
        m_fence = _FENCE.match(line)
        if m_fence:
            marker = m_fence.group(1)
            fence = None if fence == marker else (fence or marker)
            continue
        if fence is None:
            m = _HEADING.match(line)
            if m:
                heads.append((i, len(m.group(1)), m.group(2).strip()))
    out: list[Section] = []
    for k, (i, level, title) in enumerate(heads):
        end = len(lines)
        for j, lvl, _ in heads[k + 1 :]:
            if lvl <= level:
                end = j
                break
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        text = "\n".join(lines[i + 1 : end]).strip("\n")
        out.append(Section(title, level, first_line + i, first_line + end - 1, text))
    return tuple(out)
