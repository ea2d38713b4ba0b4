"""Frozen records with a checked JSON form: the base of the analysis and ``observe`` report models.

A ``Record`` is a frozen, slotted, keyword-only dataclass. ``to_dict`` gives its JSON form;
``from_dict`` reads that form back and checks it against the field annotations: unknown or
missing keys, wrong types, values outside ``Literal`` choices or below an ``AtLeast`` bound
raise one ``RecordError`` (a ``ValueError``) naming the field (``GapSummary.signals[3].source: …``). Building a
record in code does no such checking (mypy does it), so the scan path stays cheap and never
imports pydantic.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``Any``, ``X | None``,
``Literal[…]``, ``tuple[X, ...]``, ``list[X]``, ``dict[K, V]``, nested records, ``Watermark``
and ``Annotated[X, AtLeast(n), AtMost(n)]``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self, Union

from knowmeter.watermark import Watermark

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema


@dataclasses.dataclass(frozen=True, slots=True)
class AtLeast:
    """Lower bound of a number field, checked by ``from_dict``."""

    bound: float

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), "minimum": self.bound}


@dataclasses.dataclass(frozen=True, slots=True)
class AtMost:
    """Upper bound of a number field, checked by ``from_dict``."""

    bound: float

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), "maximum": self.bound}


#: A count: a whole number, at least 0.
Count = Annotated[int, AtLeast(0)]


class RecordError(ValueError):
    """Stored JSON that does not read back as the record it should be; the message names the field."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """A frozen result with its JSON form. ``omit_none``: whether ``to_dict`` leaves out fields
    that are None (nested records follow the outermost record's choice)."""

    omit_none: ClassVar[bool] = True

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: nested records and watermarks as dicts, tuples as lists."""
        return _record_dict(self, type(self).omit_none)

    @classmethod
    def from_dict(cls, d: Any) -> Self:
        """Rebuild from ``to_dict`` output; ``RecordError`` naming the first field that is wrong."""
        try:
            loaded: Self = _load_record(cls, d, cls.__name__)
        except ValueError as exc:
            raise RecordError(str(exc)) from None
        return loaded

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """As a field of a pydantic model (report.json): read with ``from_dict`` (its errors name
        the field), written as ``to_dict``; the JSON Schema is the dataclass's own."""
        from pydantic_core import core_schema as cs

        return cs.no_info_wrap_validator_function(
            lambda v, _: v if isinstance(v, cls) else cls.from_dict(v),
            handler(source),
            serialization=cs.plain_serializer_function_ser_schema(lambda r: r.to_dict()),
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The dataclass's fields, read and written alike; ``to_dict`` leaves out a field that is
        None (``omit_none``): such fields are not required."""
        json_schema = handler(schema["schema"])
        target = handler.resolve_ref_schema(json_schema)
        target["additionalProperties"] = False
        if cls.omit_none and "required" in target:
            hints = typing.get_type_hints(cls)
            target["required"] = [f for f in target["required"] if not _nullable(hints[f])]
        return json_schema


def _nullable(tp: Any) -> bool:
    return (typing.get_origin(tp) in (Union, types.UnionType)) and type(None) in typing.get_args(tp)


def _record_dict(rec: Record, omit_none: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _field_names(type(rec)):
        value = getattr(rec, name)
        if value is None and omit_none:
            continue
        out[name] = _json(value, omit_none)
    return out


def _json(value: Any, omit_none: bool) -> Any:
    if isinstance(value, Record):
        return _record_dict(value, omit_none)
    if isinstance(value, tuple | list):
        return [_json(v, omit_none) for v in value]
    if isinstance(value, dict):
        return {k: _json(v, omit_none) for k, v in value.items()}
    if isinstance(value, Watermark):
        return value.to_dict()
    return value


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_LOADERS: dict[type, tuple[dict[str, Callable[[Any, str], Any]], frozenset[str], frozenset[str]]] = {}


def _field_names(cls: type[Record]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _loaders(
    cls: type[Record],
) -> tuple[dict[str, Callable[[Any, str], Any]], frozenset[str], frozenset[str]]:
    """Per field, the function that checks and converts its JSON value; the required fields; and
    the fields without a default that may be None — ``to_dict`` leaves those out when they are
    (``omit_none``), so a missing one reads back as None (built on first use: the annotations
    are only resolved when a record is read back)."""
    cached = _LOADERS.get(cls)
    if cached is None:
        hints = typing.get_type_hints(cls, include_extras=True)
        fields = dataclasses.fields(cls)
        no_default = {
            f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        nullable = frozenset(name for name in no_default if type(None) in typing.get_args(hints[name]))
        cached = _LOADERS[cls] = (
            {f.name: _loader(hints[f.name]) for f in fields},
            frozenset(no_default - nullable),
            nullable,
        )
    return cached


def _load_record(cls: type[Record], d: Any, where: str) -> Any:
    if isinstance(d, cls):
        return d
    if not isinstance(d, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(d).__name__}")
    loaders, required, nullable = _loaders(cls)
    unknown = sorted(set(d) - set(loaders))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
    missing = sorted(required - set(d))
    if missing:
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}")
    try:
        values = dict.fromkeys(nullable) | {k: loaders[k](v, f"{where}.{k}") for k, v in d.items()}
        return cls(**values)
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(where):
            raise
        raise ValueError(f"{where}: {exc}") from None


def _loader(tp: Any) -> Callable[[Any, str], Any]:
    """The checking converter for one annotation (built once per field)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return _bounded(_loader(args[0]), args[1:])
    if tp is Any:
        return lambda v, where: v
    if origin is Union or origin is types.UnionType:
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:
            raise TypeError(f"unsupported union {tp}")
        inner = _loader(options[0])
        return lambda v, where: None if v is None else inner(v, where)
    if origin is Literal:
        choices = args
        return lambda v, where: (
            v
            if any(v == c and type(v) is type(c) for c in choices)
            else _fail(where, f"one of {', '.join(map(repr, choices))}", v)
        )
    if tp in _SCALARS:
        return _SCALARS[tp]
    if origin is tuple or origin is list:
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            raise TypeError(f"unsupported tuple {tp}: use tuple[X, ...]")
        item = _loader(args[0])
        build: Callable[[Any], Any] = tuple if origin is tuple else list

        def load_seq(v: Any, where: str) -> Any:
            if not isinstance(v, list | tuple):
                _fail(where, "a list", v)
            return build(item(x, f"{where}[{i}]") for i, x in enumerate(v))

        return load_seq
    if origin is dict:
        key, value = _loader(args[0]), _loader(args[1])

        def load_map(v: Any, where: str) -> Any:
            if not isinstance(v, dict):
                _fail(where, "a mapping", v)
            return {key(k, f"{where} key"): value(x, f"{where}[{k!r}]") for k, x in v.items()}

        return load_map
    if tp is Watermark:

        def load_watermark(v: Any, where: str) -> Watermark:
            try:
                return v if isinstance(v, Watermark) else Watermark.from_dict(v)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None

        return load_watermark
    if isinstance(tp, type) and issubclass(tp, Record):
        return lambda v, where: _load_record(tp, v, where)
    raise TypeError(f"unsupported annotation {tp}")


def _bounded(inner: Callable[[Any, str], Any], marks: tuple[Any, ...]) -> Callable[[Any, str], Any]:
    low = max((m.bound for m in marks if isinstance(m, AtLeast)), default=None)
    high = min((m.bound for m in marks if isinstance(m, AtMost)), default=None)

    def load(v: Any, where: str) -> Any:
        v = inner(v, where)
        if v is not None and ((low is not None and v < low) or (high is not None and v > high)):
            span = f">= {low:g}" if high is None else f"<= {high:g}" if low is None else f"in [{low:g}, {high:g}]"
            raise ValueError(f"{where}: must be {span}, got {v!r}")
        return v

    return load


def _fail(where: str, expected: str, got: Any) -> typing.NoReturn:
    raise ValueError(f"{where}: expected {expected}, got {got!r}"[:300])


def _str(v: Any, where: str) -> str:
    return v if isinstance(v, str) else _fail(where, "a string", v)


def _int(v: Any, where: str) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else _fail(where, "a whole number", v)


def _float(v: Any, where: str) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else _fail(where, "a number", v)


def _bool(v: Any, where: str) -> bool:
    return v if isinstance(v, bool) else _fail(where, "true or false", v)


_SCALARS: dict[Any, Callable[[Any, str], Any]] = {str: _str, int: _int, float: _float, bool: _bool}
