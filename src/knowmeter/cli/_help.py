"""The command-line reference, generated from click's ``--help`` of every command and subcommand:
``knowmeter docs cli`` prints it and ``docs/cli.md`` is its output (a test keeps the file in step;
regenerate with ``knowmeter docs cli > docs/cli.md``)."""

from __future__ import annotations

from collections.abc import Iterator

import click

#: click's own cap on help width: the text a terminal of 80 columns or more shows
WIDTH = 80


def command_help(root: click.Command, name: str = "knowmeter") -> Iterator[tuple[str, str]]:
    """``(command line, its --help text)`` for ``root`` and every subcommand below it, in the
    order ``--help`` lists them."""

    def walk(cmd: click.Command, path: list[str], parent: click.Context | None) -> Iterator[tuple[str, str]]:
        settings = {**cmd.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
        ctx = cmd.context_class(cmd, info_name=path[-1], parent=parent, **settings)
        yield " ".join(path), cmd.get_help(ctx)
        if isinstance(cmd, click.Group):
            for sub in cmd.list_commands(ctx):
                child = cmd.get_command(ctx, sub)
                if child is not None and not child.hidden:
                    yield from walk(child, [*path, sub], ctx)

    return walk(root, [name], None)


def cli_reference() -> str:
    """Every command's ``--help`` in Markdown (``docs/cli.md``)."""
    from knowmeter.cli import cli

    out = ["# knowmeter command line", "",
           "Generated from `--help` by `knowmeter docs cli` (`knowmeter docs cli > docs/cli.md`); a test keeps "
           "this file in step.", ""]
    for line, text in command_help(cli):
        out += [f"## `{line}`", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(out)
