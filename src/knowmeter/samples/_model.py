"""The Sample model (omk's eval-sample fields, and knowmeter's own; no others)."""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, field_validator
from pydantic.dataclasses import dataclass

Difficulty = Literal["easy", "medium", "hard"]


def id_name_problem(name: str) -> str | None:
    """Why ``name`` (a sample id or a variant name) cannot be part of a task id
    (``<sample>::<variant>::r<n>``: a ``::`` inside a name would let two tasks share one), or None."""
    if "::" in name or name.startswith(":") or name.endswith(":"):
        return "must not contain '::' or start or end with ':' (task ids join names with '::')"
    return None


@dataclass(slots=True, config=ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True))
class Sample:
    """One eval case. Fields follow omk's ``eval-samples`` format (the keys omk reads and
    knowmeter does not are kept as they are), plus what knowmeter's own commands write; any other
    key is refused — a misspelt ``assertion:`` would otherwise leave a sample without assertions.
    Your own notes go under ``metadata`` (or ``tags``).

    A slots dataclass, not a ``BaseModel``: a run holds every sample at once, and a model's
    per-instance ``__dict__`` and fields-set cost ~1 KB a sample (100 MB at 100,000 samples)."""

    sample_id: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    context: str | None = None
    cwd: str | None = None
    rubric: str | None = None
    dimensions: dict[str, str] | None = None
    assertions: list[dict[str, Any]] = Field(default_factory=list)
    capability: str | list[str] | None = None
    difficulty: Difficulty | None = None
    # "construct" would shadow pydantic's BaseModel.construct; the file key stays "construct"
    construct_name: str | None = Field(default=None, alias="construct")
    provenance: str | None = None
    # omk's, kept and not read: tool limits, a trap sample, mocked tool calls, the environment
    allowedTools: list[str] | None = None
    expectedTools: list[str] | None = None
    tripwire: bool | None = None
    mocks: list[dict[str, Any]] | None = None
    mocksStrict: bool | None = None
    environment: dict[str, Any] | None = None
    # written by knowmeter: probe and sample --from-gaps drafts (what made them, who refined them
    # or why that failed), comprehension cases
    probe: dict[str, Any] | None = None
    draft: bool | None = None
    gap: dict[str, Any] | None = None
    refined_by: str | None = None
    refine_error: str | None = None
    truth_sources: list[str] | None = None
    comprehension: dict[str, Any] | None = None
    # the sample author's own, never read
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("sample_id", mode="before", json_schema_input_type=str | int)
    @classmethod
    def _id_as_text(cls, v: object) -> object:
        # omk files sometimes use numeric ids; keep them as their text form
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        return v

    @field_validator("sample_id")
    @classmethod
    def _id_fits_a_task_id(cls, v: str) -> str:
        problem = id_name_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @classmethod
    def from_record(cls, record: Any) -> Sample:
        """A sample from its file form (a mapping); ``pydantic.ValidationError`` when it does not fit."""
        return _adapter().validate_python(record)

    def to_record(self, *, omit_unset: bool = False) -> dict[str, Any]:
        """The JSON form, keyed as in a sample file (``construct``); ``omit_unset`` leaves out
        the fields left empty or at their default (the form the watermark hashes)."""
        record: dict[str, Any] = _adapter().dump_python(
            self, mode="json", exclude_none=omit_unset, exclude_defaults=omit_unset
        )
        return record

    def full_prompt(self) -> str:
        """The prompt the agent sees: the prompt, then the context (if any) fenced below it."""
        if not self.context:
            return self.prompt
        return f"{self.prompt}\n\n<context>\n{self.context}\n</context>"


#: The keys a sample may have, as written in a file.
SAMPLE_KEYS: tuple[str, ...] = tuple(
    f.alias or name
    for name, f in Sample.__pydantic_fields__.items()  # type: ignore[attr-defined]
)


@cache
def _adapter() -> TypeAdapter[Sample]:
    return TypeAdapter(Sample)
