"""The assertion registry: type name → typed config class, validated at load time.

Every assertion type is a pydantic model (its fields are its config) registered under its type
name with ``@register``. Common keys: ``weight`` (default 1, may be fractional, 0 = reported but
not scored), ``not: true`` (inverts the result; a result that could not be evaluated stays
unevaluated) and ``description`` (free text, as in omk files). Unknown keys are input errors.
"""

from __future__ import annotations

import difflib
import importlib
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from knowmeter._no_bool import refuse_bool_for_a_number
from knowmeter.errors import InputError
from knowmeter.executors import ExecResult
from knowmeter.grading._catalog import BUILTIN_MODULES, DEFAULT_LAYER
from knowmeter.grading._layers import Layer
from knowmeter.grading._model import AssertionResult, GradingConfig, JudgeSpec
from knowmeter.samples import Sample


@dataclass(frozen=True, slots=True)
class CheckContext:
    """What an assertion can look at."""

    sample: Sample
    result: ExecResult
    judges: Sequence[JudgeSpec]
    config: GradingConfig
    task_id: str

    @property
    def output(self) -> str:
        return self.result.output


@dataclass(slots=True)
class Outcome:
    """An assertion's raw outcome (before ``not``). ``passed`` None: not evaluated.
    ``judge_costs`` are the costs of the judge calls it made (None = unknown)."""

    passed: bool | None
    message: str
    details: dict[str, Any] | None = None
    judge_costs: list[float | None] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LoadContext:
    """Passed to validation as pydantic context: where the assertion is, and the sample file's
    directory (``custom`` paths are relative to it)."""

    where: str
    base_dir: Path


class Assertion(BaseModel):
    """Base of every assertion type."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    type: str
    weight: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    negate: bool = Field(default=False, alias="not")
    description: str | None = None

    type_name: ClassVar[str] = ""

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, v: Any, info: ValidationInfo) -> Any:
        """``weight: true`` is refused like ``weight: x`` (pydantic would read true as 1)."""
        return refuse_bool_for_a_number(cls, v, info)

    @property
    def layer(self) -> Layer:
        """The layer this assertion scores in."""
        return DEFAULT_LAYER[self.type_name]

    @abstractmethod
    async def evaluate(self, ctx: CheckContext) -> Outcome:
        """Check the task; the result before ``not`` is applied."""


class SyncAssertion(Assertion):
    """An assertion that needs no I/O."""

    @abstractmethod
    def check(self, ctx: CheckContext) -> Outcome:
        """Check the task."""

    async def evaluate(self, ctx: CheckContext) -> Outcome:
        return self.check(ctx)


class ListAssertion(SyncAssertion):
    """An assertion with a ``values`` list that also accepts ``value`` (one item, or a list)."""

    @model_validator(mode="before")
    @classmethod
    def _single_value(cls, data: Any) -> Any:
        if isinstance(data, dict) and "value" in data and "values" not in data:
            data = dict(data)
            value = data.pop("value")
            data["values"] = value if isinstance(value, list) else [value]
        return data


_REGISTRY: dict[str, type[Assertion]] = {}

A = TypeVar("A", bound=type[Assertion])


def register(name: str) -> Callable[[A], A]:
    """Class decorator: register an assertion type under ``name``, a type ``BUILTIN_TYPES`` lists
    (its layer, summary and example live there)."""
    if name not in BUILTIN_MODULES:
        raise ValueError(f"assertion type {name!r} is not in knowmeter.grading._catalog.BUILTIN_TYPES; add it there")

    def deco(cls: A) -> A:
        cls.type_name = name
        _REGISTRY[name] = cls
        return cls

    return deco


def assertion_class(name: str) -> type[Assertion] | None:
    """The class registered under ``name``, importing its built-in module on first use."""
    if name not in _REGISTRY and name in BUILTIN_MODULES:
        importlib.import_module(f"knowmeter.grading.{BUILTIN_MODULES[name]}")
    return _REGISTRY.get(name)


def assertion_types() -> dict[str, Layer | None]:
    """Every assertion type and its default layer (None: ``assert-set``, which takes its members')."""
    for name in BUILTIN_MODULES:
        assertion_class(name)
    return {name: DEFAULT_LAYER.get(name) for name in sorted(_REGISTRY)}


def _describe(exc: ValidationError, cls: type[Assertion]) -> str:
    errors = exc.errors()
    # a misspelt key also shows up as a missing one: name the misspelling
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        allowed = sorted(f.alias or name for name, f in cls.model_fields.items() if name != "type")
        return f"unknown key {loc!r} (allowed: {', '.join(allowed)})"
    if err["type"] == "missing":
        return f"missing key {loc!r}"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


def load_assertion(raw: Any, where: str, base_dir: Path) -> Assertion:
    """Validate one assertion; ``where`` names it in error messages."""
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        raise InputError(f"{where}: an assertion must be a mapping with a 'type' key; got {raw!r:.80}")
    name = raw["type"]
    cls = assertion_class(name)
    if cls is None:
        known = sorted({*_REGISTRY, *BUILTIN_MODULES})
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InputError(f"{where}: unknown assertion type {name!r}; {hint}valid types: {', '.join(known)}")
    try:
        return cls.model_validate(raw, context=LoadContext(where, base_dir))
    except ValidationError as exc:
        raise InputError(f"{where} ({name}): {_describe(exc, cls)}; fix the assertion") from None


def load_assertions(raw: Sequence[Any], where: str, base_dir: Path) -> list[Assertion]:
    """Validate a sample's assertions at load time. ``where`` names the sample (e.g.
    ``"eval-samples.yaml: sample 's003'"``); errors add ``assertion #N`` (1-based) and raise
    ``InputError`` listing the valid types for an unknown one."""
    if not isinstance(raw, list | tuple):
        raise InputError(f"{where}: 'assertions' must be a list; got {type(raw).__name__}")
    return [load_assertion(item, f"{where}: assertion #{i}", base_dir) for i, item in enumerate(raw, start=1)]


@dataclass(slots=True)
class Evaluated:
    result: AssertionResult
    judge_costs: list[float | None]


async def run_assertion(assertion: Assertion, ctx: CheckContext) -> Evaluated:
    """Evaluate one assertion and apply ``not``."""
    outcome = await assertion.evaluate(ctx)
    passed = outcome.passed
    message = outcome.message
    if assertion.negate:
        message = f"not: {message}"
        if passed is not None:
            passed = not passed
    result = AssertionResult(
        type=assertion.type,
        layer=assertion.layer.value,
        weight=assertion.weight,
        passed=passed,
        negated=assertion.negate,
        message=message,
        description=assertion.description,
        details=outcome.details,
    )
    return Evaluated(result, outcome.judge_costs)
