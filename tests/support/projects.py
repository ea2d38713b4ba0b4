"""Small project files for command-line tests: the variants' skill files."""

from __future__ import annotations

from pathlib import Path


def write_skills(root: Path, skills: dict[str, str]) -> None:
    """``root/skills/NAME.md`` holding each text of ``skills`` (NAME → text)."""
    folder = root / "skills"
    folder.mkdir(exist_ok=True)
    for name, text in skills.items():
        (folder / f"{name}.md").write_text(text)
