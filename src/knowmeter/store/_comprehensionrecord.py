"""The comprehension and activation blocks of a stored task (``TaskRecord.comprehension`` /
``.activation``): ``ComprehensionResult`` is what ``knowmeter.comprehension.grade_answer`` builds
for one answer, ``Detection`` what ``knowmeter.activation.detect_activations`` finds in one trace.
The producers build these types and every reader (the comprehension section and statistics, the
resumed run's spending, the activation report) reads them back as these types, so a field renamed
at its producer is renamed for every reader; an older line with the old name fails to read."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from knowmeter.store._graderecord import Amount

Verdict = Literal["PASS", "FAIL"]
_Count = Annotated[int, Field(ge=0)]


def _none(value: object) -> bool:
    return value is None


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CaseBehavior(_Stored):
    """One behavior the case grades (``derived``: from the rubric, not the eval file)."""

    id: str
    kind: Literal["positive", "negative"]
    description: str
    derived: bool


class CallBehavior(_Stored):
    """One grader call's checked verdict on one behavior (``review``: why a person should look;
    ``override``: why code changed the verdict)."""

    id: str
    verdict: Verdict
    evidence_quote: str
    rationale: str
    review: str | None = None
    override: str | None = None


class GraderCall(_Stored):
    """One grader call (with its re-ask): what it cost (None: unknown), its error, and — when its
    reply was accepted — its verdicts and the dimension verdict computed from them."""

    judge: str
    repeat: _Count
    attempts: _Count
    cost_usd: Amount | None
    error: str | None
    behavior_verdicts: list[CallBehavior] | None = None
    dimension_verdict: Verdict | None = None
    grader_dimension_verdict: str | None = None


class BehaviorOutcome(_Stored):
    """A behavior's verdict by majority over the accepted gradings (a tie FAILs), with the
    evidence of one grading that gave it (None: the answer is not there)."""

    id: str
    kind: Literal["positive", "negative"]
    derived: bool
    verdict: Verdict
    passes: _Count
    gradings: _Count
    evidence_quote: str | None
    rationale: str
    override: str | None
    review: str | None


class OverlapRecord(_Stored):
    """The verbatim check of the answer: ``passed`` when no ``n``-gram is shared."""

    passed: bool
    n: Annotated[int, Field(ge=1)]
    overlap_ngrams: list[str]


class ComprehensionResult(_Stored):
    """One answer to one comprehension case, graded: the case, the verbatim check (None: no
    answer), every grader call, their cost (None: unknown) and the verdicts computed in code
    (``graded`` False: no grading was accepted, ``ungraded_reason`` says why)."""

    case_id: str
    dimension: Annotated[str, Field(pattern=r"^C[1-9]$")]
    concept_field: str
    transfer: str | None
    behaviors: list[CaseBehavior]
    derived_behaviors: list[str]
    verbatim_behavior: str | None
    application: str | None = Field(default=None, description="Absent from lines written before it was stored.")
    prompt_hash: str | None = Field(default=None, exclude_if=_none, description="Absent when no grader was asked.")
    overlap: OverlapRecord | None
    calls: list[GraderCall]
    cost_usd: Amount | None
    graded: bool
    ungraded_reason: str | None
    behavior_verdicts: list[BehaviorOutcome]
    behavior_pass_fraction: Annotated[float, Field(ge=0, le=1)] | None
    verdict: Verdict | None
    review: list[str]


class Detection(_Stored):
    """Per installed skill, how it was loaded in one task (``skill_tool`` / ``read`` flags), and
    ``order``: the skills that count as activated, in the order they were first loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill_tool: dict[str, bool]
    read: dict[str, bool]
    order: tuple[str, ...]

    def activated(self, skill: str) -> bool:
        return skill in self.order

    @property
    def first(self) -> str | None:
        """The skill loaded first (a routing case's winner), or None."""
        return self.order[0] if self.order else None
