"""``--write-state`` for a v4 / v6 skill without an ``audit-state.json``: the eval receipt goes
into the SKILL.md frontmatter, limited to the fields that shape's schema has (Skill Graph
v0.5.6): v4 ``eval_last_run``; v6 also ``eval_score`` and ``eval_failed_ids``. Neither schema
has a field for the comprehension verdict: its level is the report's, reached through
``eval_last_run.receipt``; ``eval_last_run.status`` says pass / fail / mixed.

Only those keys' lines change (removed where they were, written as YAML flow mappings at the
end of the frontmatter); every other line, comment and the body are kept byte for byte. The
file is rewritten atomically.
"""

from __future__ import annotations

import json
from typing import Any

from knowmeter.skillgraph import Skill
from knowmeter.store import atomic_file

#: the eval fields each frontmatter shape's schema declares
FRONTMATTER_FIELDS = {"v4": ("eval_last_run",), "v6": ("eval_score", "eval_failed_ids", "eval_last_run")}


def frontmatter_update(skill: Skill, update: dict[str, Any]) -> dict[str, Any]:
    """The part of a sidecar ``update`` the skill's frontmatter shape can hold."""
    return {k: v for k, v in update.items() if k in FRONTMATTER_FIELDS.get(skill.shape, ())}


def write_frontmatter_state(skill: Skill, update: dict[str, Any]) -> dict[str, Any]:
    """Set ``update``'s keys (top-level frontmatter keys) in the SKILL.md; returns their previous values."""
    text = skill.path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    close = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")  # load_skill checked it exists
    drop: set[int] = set()
    for key in update:
        start = skill.key_lines.get(key)
        if start is not None:
            end = skill.key_lines.get(f"{key}$end", start)
            drop.update(range(start - 1, end))  # 1-based file lines → 0-based indexes
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    added = [f"{key}: {json.dumps(value, ensure_ascii=False)}{newline}" for key, value in update.items()]
    kept = [line for i, line in enumerate(lines[:close]) if i not in drop]
    before = {k: skill.frontmatter.get(k) for k in update}
    with atomic_file(skill.path) as fh:
        fh.write("".join([*kept, *added, *lines[close:]]).encode("utf-8"))
    return before
