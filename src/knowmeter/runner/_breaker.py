"""Stopping a broken run: when the first finished tasks all failed the same way (a missing key,
an unknown model, an agent CLI that is not installed), every later task would fail too — stop
starting tasks instead of paying for them.

"The same way" is the same *error class*: the error's first line with what varies from task to
task taken out — the task's sample id and variant name (as whole words), numbers, quoted strings, paths and hex
ids — lower-cased and cut to 160 characters; a timeout is its own class. A task that succeeds
disarms the breaker for the rest of the run: once one task worked, failures are the agent's, not
the run's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[\w.\-~]+){2,}/?")
_HEX = re.compile(r"\b[0-9a-f]{8,}\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")


def error_class(error: str, *, sample_id: str = "", variant: str = "", timed_out: bool = False) -> str:
    """The class of a task's error message (see the module's docstring)."""
    if timed_out:
        return "timed out"
    line = next((ln for ln in error.splitlines() if ln.strip()), "")
    for own in (sample_id, variant):
        if own and not own.isdigit():  # a numeric id is a number like any other (an exit code may equal it)
            line = re.sub(rf"(?<![\w-]){re.escape(own)}(?![\w-])", "<id>", line)
    line = _QUOTED.sub("<str>", line)
    line = _PATH.sub("<path>", line)
    line = _HEX.sub("<hex>", line)
    line = _NUMBER.sub("<n>", line)
    return _SPACE.sub(" ", line).strip().lower()[:160]


@dataclass
class ErrorBreaker:
    """Trips when the first ``limit`` finished tasks all failed with one error class (``limit``
    None or 0: never)."""

    limit: int | None
    classes: list[str] = field(default_factory=list)
    first_error: str | None = None
    disarmed: bool = False
    tripped: bool = False

    def observe(self, error: str | None, *, sample_id: str, variant: str, timed_out: bool = False) -> bool:
        """Count one finished task; True when this task trips the breaker."""
        if not self.limit or self.disarmed or self.tripped:
            return False
        if error is None:
            self.disarmed = True
            return False
        cls = error_class(error, sample_id=sample_id, variant=variant, timed_out=timed_out)
        if self.classes and cls != self.classes[0]:
            self.disarmed = True  # failures of different kinds: not one broken setting
            return False
        self.classes.append(cls)
        if self.first_error is None:
            self.first_error = (error.strip().splitlines() or [""])[0][:300]
        self.tripped = len(self.classes) >= self.limit
        return self.tripped

    def reason(self) -> str:
        """Why the run stopped, in one line (only once tripped)."""
        return (
            f"the first {len(self.classes)} finished tasks all failed the same way "
            f"(error class: {self.classes[0]!r}; first error: {self.first_error})"
        )
