"""``assert-set``: a group of assertions that passes when ``all`` (default) or ``any`` of its
members pass. Sets nest, members may use ``not``, and the set counts as one assertion with its
own ``weight`` (members' weights are recorded but not used). A member that could not be
evaluated makes the set unevaluated only when it could change the outcome (three-valued logic).
The set scores in its members' layer; a set mixing layers must say ``layer: fact|behavior``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from knowmeter.grading._concurrency import gather
from knowmeter.grading._layers import Layer
from knowmeter.grading._registry import (
    Assertion,
    CheckContext,
    LoadContext,
    Outcome,
    load_assertion,
    register,
    run_assertion,
)


def combine(mode: Literal["all", "any"], values: list[bool | None]) -> bool | None:
    """Three-valued all/any: None (unknown) only when it could decide the result."""
    decisive = mode == "any"  # a True decides "any", a False decides "all"
    if decisive in values:
        return decisive
    if None in values:
        return None
    return not decisive


@register("assert-set")
class AssertSet(Assertion):
    mode: Literal["all", "any"] = "all"
    assertions: list[Assertion]
    layer_override: Layer | None = Field(default=None, alias="layer")

    @field_validator("assertions", mode="before")
    @classmethod
    def _load_members(cls, value: Any, info: ValidationInfo) -> list[Assertion]:
        load = info.context
        if not isinstance(load, LoadContext):
            load = LoadContext("assert-set", Path.cwd())
        if not isinstance(value, list) or not value:
            raise ValueError("'assertions' must be a non-empty list of assertions")
        return [
            load_assertion(item, f"{load.where}: member #{i}", load.base_dir) for i, item in enumerate(value, start=1)
        ]

    @model_validator(mode="after")
    def _one_layer(self) -> AssertSet:
        if self.layer_override is None and len({m.layer for m in self.assertions}) > 1:
            raise ValueError(
                "members score in different layers (fact and behavior); "
                "add 'layer: fact' or 'layer: behavior' to the set"
            )
        return self

    @property
    def layer(self) -> Layer:
        return self.layer_override or self.assertions[0].layer

    async def evaluate(self, ctx: CheckContext) -> Outcome:
        members = await gather([partial(run_assertion, m, ctx) for m in self.assertions])
        values = [m.result.passed for m in members]
        passed = combine(self.mode, values)
        n_pass = sum(v is True for v in values)
        n_unknown = sum(v is None for v in values)
        message = f"{self.mode}: {n_pass} of {len(values)} passed" + (
            f", {n_unknown} not evaluated" if n_unknown else ""
        )
        details = {"mode": self.mode, "assertions": [m.result.to_dict() for m in members]}
        return Outcome(passed, message, details, [c for m in members for c in m.judge_costs])
