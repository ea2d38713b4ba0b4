"""A command's setting options, built from ``knowmeter.settings`` (one definition per setting)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from knowmeter.cli._output import NumberRange
from knowmeter.settings import Flag, flag_of, settings_of

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[F], F]


def _type(flag: Flag) -> click.ParamType[Any] | None:
    if flag.kind == "int":
        low, high = (None if b is None else int(b) for b in (flag.low, flag.high))
        return click.IntRange(low, high, min_open=flag.low_open, max_open=flag.high_open)
    if flag.kind == "float":
        return NumberRange(flag.low, flag.high, min_open=flag.low_open, max_open=flag.high_open)
    if flag.kind == "path":
        return click.Path(path_type=Path)
    if flag.choices is not None:
        return click.Choice(flag.choices)
    return None


def setting_option(name: str, command: str) -> Decorator[Any]:
    """The option of the setting ``name`` as ``command`` takes it: its value (None when not given)
    lands under the setting's own name."""
    flag = flag_of(name)
    attrs: dict[str, Any] = {"help": flag.help_in(command)}
    if flag.kind == "switch":
        attrs.update(flag_value=flag.switch_value, default=None)
    else:
        attrs.update(type=_type(flag), multiple=flag.multiple, metavar=flag.metavar)
    return click.option(*flag.decls, name, **attrs)


def setting_options(command: str, before: Mapping[str, Sequence[Decorator[Any]]] | None = None) -> Decorator[Any]:
    """Every setting ``command`` takes, in their definition's order, with the command's other
    options ``before[name]`` placed before the setting ``name`` (so its help reads in order)."""
    decorators: list[Decorator[Any]] = []
    for name in settings_of(command):
        decorators += list((before or {}).get(name, ()))
        decorators.append(setting_option(name, command))

    def apply(fn: F) -> F:
        for deco in reversed(decorators):
            fn = deco(fn)
        return fn

    return apply
