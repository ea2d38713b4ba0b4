"""YAML text → data, with any syntax error as one line naming the file, line and column.
PyYAML is imported on first use (runs from JSON / JSONL files never load it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowmeter.errors import InputError


def parse_yaml(text: str, path: Path) -> Any:
    """``yaml.safe_load(text)``; a syntax error raises ``InputError`` naming ``path``."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{path}: {where}invalid YAML ({problem}); fix the syntax at that line") from None
