"""The parsed options of ``eval``, ``comprehend`` and ``activation`` are typed (issue 36): the
click command's parameters and the options type's fields are the same names, so renaming either
(``--junit``'s dest, say) fails here even where no end-to-end test gives that flag, instead of
reading as "not given" and switching the feature off."""

from __future__ import annotations

import dataclasses
from typing import Any

import click
import pytest

from knowmeter.cli._activation import activation_cmd
from knowmeter.cli._comprehend import comprehend_cmd
from knowmeter.cli._eval import eval_cmd
from knowmeter.cli._options import ActivationOptions, ComprehendOptions, EvalOptions
from knowmeter.settings import COMPREHEND, EVAL, settings_of

#: command, its options type, the command name its settings are defined for (None: no settings)
COMMANDS: list[tuple[click.Command, Any, str | None]] = [
    (eval_cmd, EvalOptions, EVAL),
    (comprehend_cmd, ComprehendOptions, COMPREHEND),
    (activation_cmd, ActivationOptions, None),
]
IDS = [command.name for command, _, _ in COMMANDS]


def _fields(kind: Any, settings: str | None) -> set[str]:
    names = {f.name for f in dataclasses.fields(kind)} - {"settings"}
    return names | set(settings_of(settings)) if settings else names


@pytest.mark.parametrize(("command", "kind", "settings"), COMMANDS, ids=IDS)
def test_the_click_parameters_are_the_fields_of_the_options_type(
    command: click.Command, kind: Any, settings: str | None
) -> None:
    params = {p.name for p in command.params}
    fields = _fields(kind, settings)
    assert sorted(params - fields) == [], "click parameters the options type has no field for"
    assert sorted(fields - params) == [], "options fields no click parameter gives"


def _value(param: click.Parameter) -> Any:
    """A value for ``param`` as click hands it over when the user gave the flag, unlike its default."""
    if param.multiple or param.nargs == -1:
        return ("x",)
    if isinstance(param, click.Option) and param.is_flag:
        return param.flag_value
    if isinstance(param.type, click.Choice):
        return param.type.choices[-1]
    return 7 if isinstance(param.type, click.types.IntParamType | click.IntRange) else "given"


@pytest.mark.parametrize(("command", "kind", "settings"), COMMANDS, ids=IDS)
def test_every_parsed_option_lands_on_its_field(command: click.Command, kind: Any, settings: str | None) -> None:
    given = {p.name: _value(p) for p in command.params if p.name}
    options = kind.of(given)
    for name, value in given.items():
        where = options.settings if settings and name in settings_of(settings) else options
        got = getattr(where, name)
        assert (tuple(got) if isinstance(got, list) else got) == value, name


@pytest.mark.parametrize(("command", "kind", "settings"), COMMANDS, ids=IDS)
def test_a_parameter_the_options_type_does_not_know_fails_loudly(
    command: click.Command, kind: Any, settings: str | None
) -> None:
    parsed = command.make_context(command.name or "", []).params
    assert kind.of(parsed) is not None  # the defaults build
    renamed = {("junit_file" if k == "as_json" else k): v for k, v in parsed.items()}
    with pytest.raises(TypeError):
        kind.of(renamed)


def test_a_renamed_setting_fails_loudly() -> None:
    parsed = eval_cmd.make_context("eval", []).params
    parsed["stability"] = parsed.pop("stability_limit")
    with pytest.raises(KeyError):
        EvalOptions.of(parsed)
