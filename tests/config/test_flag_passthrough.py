"""Every setting flag reaches the run (issue 36 point 2, mutation C: deleting one pass-through
line — ``stability_limit=`` — left the whole suite green). The ``eval`` / ``report`` /
``comprehend`` options and the ``Overrides`` they become are one definition
(``knowmeter.settings``); what is left to check is that each command takes what the definition
says and that each override changes the resolved ``RunConfig``."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from knowmeter import defaults
from knowmeter.api import comprehend, rescore
from knowmeter.cli._comprehend import comprehend_cmd
from knowmeter.cli._eval import eval_cmd
from knowmeter.cli._options import EvalOptions
from knowmeter.cli._report import report_cmd
from knowmeter.config import RunConfig
from knowmeter.evaluation import resolve_config
from knowmeter.settings import COMPREHEND, EVAL, REPORT, Overrides, bounds, flag_of, settings_of

COMMANDS = {EVAL: eval_cmd, REPORT: report_cmd, COMPREHEND: comprehend_cmd}

#: a valid value for each string setting, different from its default (the numbers come from their bounds)
TEXT = {
    "samples": ["other-samples.json"],
    "control": "baseline",
    "treatments": ["t.md"],
    "executor": "script-agent",
    "model": "m-1",
    "executor_options": ["base_url=http://127.0.0.1:1"],
    "skill_dir": "elsewhere",
    "output_dir": "runs",
    "judges": ["offline:judge"],
    "hedging_judge": "offline:hedge",
    "shard": "1/2",
    "control_run": "20260101-000000-abcd",
    "sample_ids": ["a"],
}


def _given(param: click.Parameter) -> Any:
    """A value for ``param`` as click hands it over when the user gave the flag."""
    if param.multiple or param.nargs == -1:
        return ("x",)
    if isinstance(param, click.Option) and param.is_flag:
        return param.flag_value
    kind = param.type
    if isinstance(kind, click.Choice):
        return kind.choices[-1]
    if isinstance(kind, click.types.IntParamType | click.IntRange):
        return 7
    if isinstance(kind, click.types.FloatParamType | click.FloatRange):
        return 0.37
    return "given"


def _value(name: str) -> Any:
    """A valid value of the setting ``name`` that is not what resolve_config takes without it."""
    flag = flag_of(name)
    if flag.kind == "switch":
        return flag.switch_value
    if flag.kind in ("int", "float"):
        low = flag.low if flag.low is not None else 0
        value = low + (flag.high - low) * 0.37 if flag.high is not None else low + 3
        return int(value) if flag.kind == "int" else float(value)
    if flag.choices is not None:
        return flag.choices[-1]  # the first choice is the default (the resolved config must change)
    return TEXT[name]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_takes_the_settings_its_definition_gives_it(command: str) -> None:
    taken = {p.name for p in COMMANDS[command].params}
    assert [s for s in settings_of(command) if s not in taken] == []


def test_every_eval_flag_reaches_its_override() -> None:
    opts = {p.name: _given(p) for p in eval_cmd.params if p.name}
    overrides = EvalOptions.of(opts).settings
    missing = [f.name for f in dataclasses.fields(Overrides) if getattr(overrides, f.name) is None]
    assert missing == [], f"eval flags that never reach Overrides: {missing}"


@pytest.mark.parametrize("command", [REPORT, COMPREHEND])
def test_the_report_and_comprehend_settings_are_parameters_of_their_api(command: str) -> None:
    apis: dict[str, Callable[..., object]] = {REPORT: rescore, COMPREHEND: comprehend}
    assert [s for s in settings_of(command) if s not in inspect.signature(apis[command]).parameters] == []


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(Overrides) if f.name != "config"])
def test_every_override_changes_the_run_configuration(name: str, tmp_path: Path) -> None:
    """resolve_config reads each override: a flag resolve_config drops changes nothing (mutation C)."""
    (tmp_path / "eval-samples.json").write_text("[]")
    base = Overrides(control="t0.md", treatments=["t1.md"])
    plain = resolve_config(base, tmp_path)
    given = resolve_config(dataclasses.replace(base, **{name: _value(name)}), tmp_path)
    assert given != plain, f"--{name.replace('_', '-')} given: the run configuration is the same"


def test_the_config_override_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "eval.yaml").write_text("samples: s.json\nvariants:\n  - artifact: baseline\n")
    assert resolve_config(Overrides(config=tmp_path / "sub" / "eval.yaml"), tmp_path).samples == ["s.json"]


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("concurrency", "concurrency"),
        ("repeat", "repeat"),
        ("retry", "retry"),
        ("judge_repeat", "judge_repeat"),
        ("max_gap_rate", "max_gap_rate"),
        ("gap_rate_regression", "gap_rate_regression"),
        ("threshold", "layer_gate"),
        ("max_mde", "max_mde"),
        ("min_pairs", "min_pairs"),
        ("stability_limit", "stability_limit"),
        ("bootstrap_samples", "bootstrap_samples"),
        ("max_errors", "max_errors"),
        ("limit", "limit"),
    ],
)
def test_the_run_configuration_checks_the_bounds_the_flag_checks(name: str, field: str) -> None:
    assert RunConfig.model_fields[field].metadata == [bounds(name)]


def test_a_switch_is_none_unless_given() -> None:
    """``--no-length-debias`` given is False, not given None: eval.yaml's lengthDebias then applies."""
    ctx = eval_cmd.make_context("eval", [])
    assert ctx.params["length_debias"] is None and ctx.params["no_cache"] is None
    ctx = eval_cmd.make_context("eval", ["--no-length-debias", "--no-cache"])
    assert ctx.params["length_debias"] is False and ctx.params["no_cache"] is True
    assert defaults.LENGTH_DEBIAS is True
