"""The command-line docs cannot drift: docs/cli.md is what ``knowmeter docs cli`` prints, which
documents every command's real ``--help``; the README's tour names every command and subcommand, names only
real ones, and every flag it mentions exists on the command its row is about."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.cli._help import cli_reference, walk_commands

REPO = Path(__file__).resolve().parents[2]


def test_docs_cli_is_the_checked_in_file() -> None:
    result = CliRunner().invoke(cli, ["docs", "cli"])
    assert result.exit_code == 0, result.output
    assert result.output == (REPO / "docs" / "cli.md").read_text(encoding="utf-8"), (
        "docs/cli.md is stale: knowmeter docs cli > docs/cli.md"
    )


def test_each_section_documents_what_the_commands_help_shows() -> None:
    """Every command and subcommand has a section, with the same flags and option help texts as
    its real ``--help`` (whatever layout the installed click gives that)."""
    sections = dict(re.findall(r"^## `([^`]+)`\n(.*?)(?=^## `|\Z)", cli_reference(), flags=re.M | re.S))
    assert {"knowmeter", "knowmeter eval", "knowmeter gold compare", "knowmeter skill lint"} <= set(sections)
    for line, cmd, ctx in walk_commands(cli):
        result = CliRunner().invoke(cli, [*line.split()[1:], "--help"], prog_name="knowmeter", terminal_width=200)
        assert result.exit_code == 0, line
        section = sections[line].replace("\\|", "|")  # a table cell escapes |
        assert _mentioned(result.output) == _mentioned(section), line
        for param in cmd.get_params(ctx):
            if isinstance(param, click.Option) and param.help:
                assert " ".join(param.help.split()) in section, (line, param.name)
        if isinstance(cmd, click.Group):
            assert all(f"| `{sub}` |" in section for sub in cmd.list_commands(ctx)), line


def test_the_reference_does_not_depend_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    reference = cli_reference()
    monkeypatch.setenv("COLUMNS", "33")
    assert cli_reference() == reference


def _commands() -> dict[str, click.Command]:
    """Every command by its command line without ``knowmeter`` (``eval``, ``gold init``, …)."""
    ctx = click.Context(cli, info_name="knowmeter")
    out: dict[str, click.Command] = {}
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        out[name] = cmd
        if isinstance(cmd, click.Group):
            out.update({f"{name} {sub}": cmd.commands[sub] for sub in cmd.commands})
    return out


def _tour() -> list[tuple[list[str], str]]:
    """The README tour's rows: the command lines of the first cell (``gold init|validate|compare``
    expanded) and the whole row's text."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## A short tour", 1)[1].split("\n\n", 2)[1]
    rows = []
    for row in table.splitlines()[2:]:
        first = row.split(" | ", 1)[0]
        lines = []
        for words in re.findall(r"knowmeter ((?:[a-z]+(?:\\\|[a-z]+)*)(?: [a-z]+(?:\\\|[a-z]+)*)?)", first):
            name, *sub = words.split(" ", 1)
            lines += [f"{name} {s}" for s in sub[0].split("\\|")] if sub else [name]
        rows.append((lines, row))
    return rows


def test_the_tour_names_every_command_and_only_real_ones() -> None:
    commands = _commands()
    named = {line for lines, _ in _tour() for line in lines}
    real = {line for line in named if line in commands or line.split(" ")[0] in commands}
    assert named == real, f"the README tour names commands that do not exist: {sorted(named - real)}"
    toured = {line.split(" ")[0] for line in named} | named
    missing = [line for line in commands if line not in toured]
    assert not missing, f"commands missing from the README tour: {missing}"


def _flags(cmd: click.Command) -> set[str]:
    params = cmd.get_params(click.Context(cmd))  # with --help
    return {opt for p in params if isinstance(p, click.Option) for opt in p.opts + p.secondary_opts}


def _mentioned(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text))


def test_every_flag_in_the_tour_exists_on_its_command() -> None:
    """A flag in a row's command cell is one of that command's; one in its text is one of some
    command's (the eval row's text names ``observe --backend``, the docs row ``--no-cache``)."""
    commands = _commands()
    every = set().union(*map(_flags, commands.values()))
    for lines, row in _tour():
        first, text = row.split(" | ", 1)
        own = set().union(*(_flags(commands[line]) for line in lines if line in commands))
        assert _mentioned(first) <= own, f"{sorted(_mentioned(first) - own)} not flags of {lines}"
        assert _mentioned(text) <= every, f"{sorted(_mentioned(text) - every)} are no command's flags: {first}"
