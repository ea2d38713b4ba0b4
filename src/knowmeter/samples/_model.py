"""The Sample model (omk's eval-sample fields, and knowmeter's own; no others)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Difficulty = Literal["easy", "medium", "hard"]


def id_name_problem(name: str) -> str | None:
    """Why ``name`` (a sample id or a variant name) cannot be part of a task id
    (``<sample>::<variant>::r<n>``: a ``::`` inside a name would let two tasks share one), or None."""
    if "::" in name or name.startswith(":") or name.endswith(":"):
        return "must not contain '::' or start or end with ':' (task ids join names with '::')"
    return None


class Sample(BaseModel):
    """One eval case. Fields follow omk's ``eval-samples`` format (the keys omk reads and
    knowmeter does not are kept as they are), plus what knowmeter's own commands write; any other
    key is refused — a misspelt ``assertion:`` would otherwise leave a sample without assertions.
    Your own notes go under ``metadata`` (or ``tags``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)

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

    def full_prompt(self) -> str:
        """The prompt the agent sees: the prompt, then the context (if any) fenced below it."""
        if not self.context:
            return self.prompt
        return f"{self.prompt}\n\n<context>\n{self.context}\n</context>"
