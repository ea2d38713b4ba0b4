"""The run's outcome as report.json stores it (``Report.decision``): the outcome word, the verdict it
rests on, the exit code, the blockers and why a run is incomplete. ``knowmeter.decision`` decides it
from the built report."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, computed_field

from knowmeter._stored import StoredModel
from knowmeter.exit_codes import EXIT_OK

BlockerKind = Literal["not_measured", "incomplete", "judge_failed", "gate_failed"]
#: Why a run's results cover only part of its plan: tasks the budget refused, a run halted by
#: ``--max-errors``, Ctrl-C / SIGTERM, a process killed (run.json still says running), a run that
#: ended complete with records unreadable, or another stop.
Incompleteness = Literal["budget", "halted", "interrupted", "killed", "records_missing", "stopped"]
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


def incompleteness(status: str | None, *, missing: int, refused_for_budget: int) -> Incompleteness | None:
    """Why a run with this run.json ``status`` and ``missing`` planned tasks without a result is
    incomplete; None when it is complete. A sequential run stopped at a look and a ``--limit`` /
    ``--sample`` subset are complete: what they planned is what ran (run.json's ``tasks_total``)."""
    if status == "complete":
        return "records_missing" if missing > 0 else None
    if status == "incomplete" and refused_for_budget:
        return "budget"
    if status == "halted":
        return "halted"
    if status == "interrupted":
        return "interrupted"
    if status in ("running", None):
        return "killed"
    return "stopped"


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
    #: why the run is incomplete (its ``incomplete`` blocker); None for a complete run
    incomplete: Incompleteness | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK
