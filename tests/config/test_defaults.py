"""Every default is defined once, in ``knowmeter.defaults``: the config models, the flag resolution,
the decision settings, the Python API and the CLI's ``--help`` show the same value, and no module
writes a default's value out again (a second copy would drift)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import click
import pytest

from knowmeter import defaults
from knowmeter.cli import cli
from knowmeter.compare import CompareConfig
from knowmeter.config import RunConfig
from knowmeter.evaluation import Overrides, resolve_config

SRC = Path(__file__).resolve().parents[2] / "src" / "knowmeter"

#: Round numbers that are also unrelated settings' defaults (a judge's concurrency of 4, a list
#: limit of 20, a custom assertion's 30 s): the scan below leaves them out; the tests after it tie
#: them to the module.
_COMMON = {0, 1, 2, 4, 6, 20, 50, 0.1, 0.5, 30.0}


def _values() -> dict[Any, str]:
    out: dict[Any, str] = {}
    for name, value in vars(defaults).items():
        scalar = isinstance(value, int | float | str) and not isinstance(value, bool)
        if name.isupper() and scalar and (isinstance(value, str) or value not in _COMMON):
            out[(type(value), value)] = name
    return out


def _default_positions(tree: ast.AST) -> list[ast.expr]:
    """Expressions in a default's place: parameter defaults, ``default=`` keywords (pydantic
    ``Field``, click options) and class-body field values (dataclasses, models)."""
    out: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arguments):
            out += [*node.defaults, *(d for d in node.kw_defaults if d is not None)]
        elif isinstance(node, ast.keyword) and node.arg == "default":
            out.append(node.value)
        elif isinstance(node, ast.ClassDef):
            out += [s.value for s in node.body if isinstance(s, ast.AnnAssign) and s.value is not None]
    return out


def test_no_module_writes_a_default_out_again() -> None:
    values = _values()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "defaults.py":
            continue
        for node in _default_positions(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and (type(node.value), node.value) in values:
                found.append(
                    f"{path.relative_to(SRC)}:{node.lineno}: {node.value!r} "
                    f"(use knowmeter.defaults.{values[(type(node.value), node.value)]})"
                )
    assert found == []


def test_the_ignored_folders_are_listed_once() -> None:
    """No other set, tuple or list literal names the folders ``defaults.IGNORED_DIRS`` names, and
    the output folder is never spelt out."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "defaults.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Set | ast.Tuple | ast.List):
                names = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if len(names & set(defaults.IGNORED_DIRS)) >= 2:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}")
            elif isinstance(node, ast.Constant) and node.value == defaults.OUTPUT_DIR:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


def test_resolution_with_nothing_set_gives_the_models_defaults(tmp_path: Path) -> None:
    (tmp_path / "eval-samples.yaml").write_text("- id: s1\n  prompt: hi\n", encoding="utf-8")
    resolved = resolve_config(Overrides(control="baseline"), tmp_path)
    for name, field in RunConfig.model_fields.items():
        if not field.is_required() and field.default_factory is None:
            assert getattr(resolved, name) == field.default, name


@pytest.mark.parametrize(
    ("compare", "run"),
    [
        ("threshold", "layer_gate"),
        ("min_effect", "min_effect"),
        ("max_mde", "max_mde"),
        ("min_pairs", "min_pairs"),
        ("stability_limit", "stability_limit"),
        ("bootstrap_samples", "bootstrap_samples"),
    ],
)
def test_the_decision_settings_default_as_the_run_config(compare: str, run: str) -> None:
    assert CompareConfig.model_fields[compare].default == RunConfig.model_fields[run].default


def _option(command: str, name: str) -> click.Option:
    ctx = click.Context(cli)
    cmd = cli.get_command(ctx, command)
    assert cmd is not None, command
    for param in cmd.params:
        if isinstance(param, click.Option) and param.name == name:
            return param
    raise AssertionError(f"{command} has no option {name}")


@pytest.mark.parametrize(
    ("option", "field"),
    [
        ("concurrency", "concurrency"),
        ("output_dir", "output_dir"),
        ("skill_dir", "skill_dir"),
        ("threshold", "layer_gate"),
        ("max_mde", "max_mde"),
        ("min_pairs", "min_pairs"),
        ("stability_limit", "stability_limit"),
        ("bootstrap_samples", "bootstrap_samples"),
    ],
)
def test_eval_help_states_the_config_default(option: str, field: str) -> None:
    """``eval``'s flags have no click default (unset, eval.yaml decides); their help says the
    run config's."""
    help_text = _option("eval", option).help or ""
    assert f"(default {RunConfig.model_fields[field].default})" in help_text.replace("default: ", "default ")


@pytest.mark.parametrize("command", ["gaps", "report", "runs", "sample", "trends", "view", "merge"])
def test_every_output_dir_option_defaults_to_the_config_default(command: str) -> None:
    option = _option(command, "output_dir")
    assert option.default == RunConfig.model_fields["output_dir"].default
    assert option.show_default


def test_gold_compare_defaults() -> None:
    ctx = click.Context(cli)
    gold = cli.get_command(ctx, "gold")
    assert isinstance(gold, click.Group)
    compare_cmd = gold.get_command(ctx, "compare")
    assert compare_cmd is not None
    options = {p.name: p for p in compare_cmd.params}
    assert str(options["output_dir"].default) == RunConfig.model_fields["output_dir"].default
    assert options["bootstrap_samples"].default == RunConfig.model_fields["bootstrap_samples"].default


def test_comprehend_cli_and_api_share_their_defaults() -> None:
    from knowmeter.api import comprehend

    signature = inspect.signature(comprehend).parameters
    for name in ("executor", "repeat", "judge_repeat", "ngram"):
        assert _option("comprehend", name).default == signature[name].default, name
    assert signature["repeat"].default == RunConfig.model_fields["repeat"].default
    assert signature["judge_repeat"].default == RunConfig.model_fields["judge_repeat"].default


def test_view_defaults_are_the_servers() -> None:
    from knowmeter.viewer import make_server

    signature = inspect.signature(make_server).parameters
    assert _option("view", "port").default == signature["port"].default
    assert _option("view", "host").default == signature["host"].default


def test_the_version_is_written_once() -> None:
    """``knowmeter._version`` is the only place: pyproject.toml reads it (setuptools dynamic
    version) and every run records it."""
    import tomllib

    import knowmeter
    from knowmeter import _provenance

    project = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "knowmeter._version.__version__"}
    assert _provenance.versions()["knowmeter"] == knowmeter.__version__


def test_backend_and_probe_flags_default_as_the_api() -> None:
    from knowmeter import api
    from knowmeter.probe import HEADINGS_GENERATOR

    assert _option("eval", "backend").default == inspect.signature(api.evaluate).parameters["backend"].default
    assert _option("observe", "backend").default == inspect.signature(api.observe_traces).parameters["backend"].default
    probe = inspect.signature(api.generate_probe_set).parameters
    assert _option("probe", "generator").default == probe["generator"].default == HEADINGS_GENERATOR


def test_the_readme_table_of_decision_defaults_states_the_real_ones() -> None:
    """The README's settings table (``gates.*`` key, flag, default) is prose: it must say the
    values the run config has."""
    readme = (SRC.parents[1] / "README.md").read_text(encoding="utf-8")
    fields = {
        "layerGate": "layer_gate",
        "minEffect": "min_effect",
        "maxMde": "max_mde",
        "minPairs": "min_pairs",
        "stabilityLimit": "stability_limit",
    }
    rows = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[1].startswith("`gates."):
            rows[cells[1].strip("`").removeprefix("gates.")] = float(cells[3].split()[0])
    assert set(rows) == set(fields)
    for key, field in fields.items():
        assert rows[key] == RunConfig.model_fields[field].default, key
