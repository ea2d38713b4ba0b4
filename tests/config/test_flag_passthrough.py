"""Every ``eval`` flag that has an ``Overrides`` field reaches it (issue 36, mutation C: deleting
one pass-through line in ``cli/_run.py`` — ``stability_limit=`` — left the whole suite green)."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from knowmeter.cli._eval import eval_cmd
from knowmeter.cli._run import _overrides
from knowmeter.evaluation import Overrides


def _given(param: click.Parameter) -> Any:
    """A value for ``param`` as click hands it over when the user gave the flag."""
    if param.multiple or param.nargs == -1:
        return ("x",)
    if isinstance(param, click.Option) and param.is_flag:
        return True
    kind = param.type
    if isinstance(kind, click.Choice):
        return kind.choices[-1]
    if isinstance(kind, click.types.IntParamType | click.IntRange):
        return 7
    if isinstance(kind, click.types.FloatParamType | click.FloatRange):
        return 0.37
    return "given"


def test_every_eval_flag_reaches_its_override() -> None:
    opts = {p.name: _given(p) for p in eval_cmd.params if p.name}
    overrides = _overrides(opts)
    missing = [f.name for f in dataclasses.fields(Overrides) if getattr(overrides, f.name) is None]
    assert missing == [], f"eval flags that never reach Overrides: {missing}"
