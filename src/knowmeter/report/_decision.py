"""The run's outcome as report.json stores it (``Report.decision``): the outcome word, the verdict it
rests on, the exit code and the blockers. ``knowmeter.decision`` decides it from the built report."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, computed_field

from knowmeter._stored import StoredModel
from knowmeter.exit_codes import EXIT_OK

BlockerKind = Literal["not_measured", "incomplete", "judge_failed", "gate_failed"]
Outcome = Literal[
    "PROGRESS",
    "CAUTIOUS",
    "REGRESS",
    "NOISE",
    "UNDERPOWERED",
    "SOLO",
    "NOT MEASURED",
    "INCOMPLETE",
    "JUDGE FAILED",
    "GATE FAILED",
    "PASS",
    "PROVISIONAL",
    "SHALLOW",
    "REDUNDANT",
    "SKIPPED_BASELINE_HIGH",
    "UNVERIFIED",
]

#: The outcome word each blocker gives the run, in the order they take precedence.
OUTCOMES: dict[BlockerKind, Outcome] = {
    "not_measured": "NOT MEASURED",
    "incomplete": "INCOMPLETE",
    "judge_failed": "JUDGE FAILED",
    "gate_failed": "GATE FAILED",
}

#: How a blocker is named in a line of its own (``✗ gate failed: …``).
LABELS: dict[BlockerKind, str] = {k: v.lower() for k, v in OUTCOMES.items()}


class Blocker(StoredModel):
    """A reason the run cannot pass, whatever its verdict."""

    model_config = ConfigDict(frozen=True)

    kind: BlockerKind
    message: str


class Decision(StoredModel):
    """The outcome of a run (``Report.decision``): the verdict's level (a comparison's, or a
    comprehension run's skill verdict) or the first blocker's word, and the exit code."""

    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    #: the verdict the outcome rests on; None when there is none (NOT MEASURED: nothing was measured)
    verdict: str | None
    exit_code: int
    headline: str
    recommendation: str
    blockers: list[Blocker] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK
