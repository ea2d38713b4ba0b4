"""The command-line reference in Markdown, rendered from the commands' own definitions (help
texts, parameters, defaults) rather than from click's formatted ``--help``, whose layout changes
between click releases: ``knowmeter docs cli`` prints it and ``docs/cli.md`` is its output (a test
keeps the file in step; regenerate with ``knowmeter docs cli > docs/cli.md``)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import click

_NO_REWRAP = "\b"  # click's marker of a paragraph printed as written


def walk_commands(root: click.Command, name: str = "knowmeter") -> Iterator[tuple[str, click.Command, click.Context]]:
    """``(command line, command, its context)`` for ``root`` and every visible subcommand below
    it, in the order ``--help`` lists them."""

    def walk(
        cmd: click.Command, path: list[str], parent: click.Context | None
    ) -> Iterator[tuple[str, click.Command, click.Context]]:
        ctx = cmd.context_class(cmd, info_name=path[-1], parent=parent, **cmd.context_settings)
        yield " ".join(path), cmd, ctx
        if isinstance(cmd, click.Group):
            for sub in cmd.list_commands(ctx):
                child = cmd.get_command(ctx, sub)
                if child is not None and not child.hidden:
                    yield from walk(child, [*path, sub], ctx)

    return walk(root, [name], None)


def cli_reference() -> str:
    """Every command's usage, description, options and subcommands in Markdown (``docs/cli.md``)."""
    from knowmeter.cli import cli

    out = [
        "# knowmeter command line",
        "",
        "Generated from the commands' definitions by `knowmeter docs cli` (`knowmeter docs cli > docs/cli.md`); "
        "a test keeps this file in step with every command's `--help`.",
        "",
    ]
    for line, cmd, ctx in walk_commands(cli):
        out += _section(line, cmd, ctx)
    return "\n".join(out)


def _section(line: str, cmd: click.Command, ctx: click.Context) -> list[str]:
    params = cmd.get_params(ctx)
    usage = [
        line,
        *(["[OPTIONS]"] if any(isinstance(p, click.Option) for p in params) else []),
        *(_argument(p) for p in params if isinstance(p, click.Argument)),
    ]
    if isinstance(cmd, click.Group):
        usage.append("COMMAND [ARGS]...")
    out = [f"## `{line}`", "", f"`{' '.join(usage)}`", "", *_paragraphs(cmd.help or "")]
    options = [p for p in params if isinstance(p, click.Option) and not p.hidden]
    if options:
        out += ["| option | value | description |", "| --- | --- | --- |"]
        out += [f"| {_flags(p)} | {_value(p)} | {_cell(_option_text(p))} |" for p in options]
        out.append("")
    if isinstance(cmd, click.Group):
        out += ["| command | what it does |", "| --- | --- |"]
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                out.append(f"| `{name}` | {_cell(sub.short_help or _first_sentence(sub.help or ''))} |")
        out.append("")
    if cmd.epilog:
        out += _paragraphs(cmd.epilog)
    return out


def _argument(param: click.Argument) -> str:
    name = param.human_readable_name + ("..." if param.nargs == -1 else "")
    return name if param.required else f"[{name}]"


def _paragraphs(text: str) -> list[str]:
    """Help text as Markdown paragraphs; a paragraph click prints as written stays a text block."""
    out: list[str] = []
    for para in inspect.cleandoc(text).split("\n\n"):
        if para.startswith(_NO_REWRAP + "\n"):
            out += ["```text", para[2:], "```", ""]
        elif para.strip():
            out += [" ".join(para.split()), ""]
    return out


def _first_sentence(text: str) -> str:
    first = " ".join(inspect.cleandoc(text).split("\n\n", 1)[0].split())
    return first.split(". ", 1)[0].rstrip(".") + "." if first else ""


def _flags(option: click.Option) -> str:
    """The option's names, short ones first (click builds the help option's names from a set)."""
    names = ", ".join(f"`{o}`" for o in sorted(option.opts, key=lambda o: (o.startswith("--"), o)))
    return names + "".join(f" / `{o}`" for o in option.secondary_opts)


def _value(option: click.Option) -> str:
    """What the option takes: nothing (a flag), its metavar, its choices, or its type and range."""
    if option.is_flag or option.count:
        return ""
    if option.metavar:
        text = option.metavar
    else:
        kind = option.type
        if isinstance(kind, click.Choice):
            text = " \\| ".join(str(c) for c in kind.choices)
        elif isinstance(kind, click.IntRange | click.FloatRange):
            text = f"{'integer' if isinstance(kind, click.IntRange) else 'number'} {_range(kind)}"
        elif isinstance(kind, click.Path):
            text = "PATH"
        else:
            text = kind.name.upper()
    return text + (" (repeatable)" if option.multiple else "")


def _range(kind: click.IntRange | click.FloatRange) -> str:
    low = None if kind.min is None else f"{'>' if kind.min_open else '≥'} {kind.min}"
    high = None if kind.max is None else f"{'<' if kind.max_open else '≤'} {kind.max}"
    if low and high:
        return f"{kind.min}–{kind.max}" if not (kind.min_open or kind.max_open) else f"{low}, {high}"
    return low or high or ""


def _option_text(option: click.Option) -> str:
    text = " ".join((option.help or "").split())
    if option.show_default and option.default not in (None, False, ()):
        shown = option.show_default if isinstance(option.show_default, str) else option.default
        text += f" (default: {shown})"
    return text + (" (required)" if option.required else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
