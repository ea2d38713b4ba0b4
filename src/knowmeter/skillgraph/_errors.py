"""The one error type of the Skill Graph readers."""

from __future__ import annotations

from pathlib import Path

from knowmeter.errors import InputError


class SkillFormatError(InputError, ValueError):
    """A SKILL.md, ``audit-state.json`` or eval file knowmeter cannot read as written.

    The message is one line: the file (and line when known), the case id and field when there
    is one, what is wrong, and the accepted values or the fix. It is an ``InputError`` (the CLI
    prints it and exits 2) and a ``ValueError``."""

    def __init__(
        self,
        path: Path | str,
        problem: str,
        *,
        line: int | None = None,
        case_id: str | None = None,
        field: str | None = None,
    ) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        parts = [where]
        if case_id is not None:
            parts.append(f"case {case_id}")
        if field is not None:
            parts.append(f"field {field!r}")
        super().__init__(": ".join([*parts, problem]))
        self.path = Path(path)
        self.line = line
        self.case_id = case_id
        self.field = field
