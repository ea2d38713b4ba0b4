"""``knowmeter docs [TOPIC]``: the generated reference (assertion types, script protocol, judge
replies, response cache, every command's ``--help``) and, with ``--schema``, the shipped JSON
Schemas of eval.yaml, sample files and report.json."""

from __future__ import annotations

import click

from knowmeter.reference import TOPICS
from knowmeter.schemas import SCHEMAS

CLI_TOPIC = "cli"


@click.command("docs")
@click.argument("topic", required=False, type=click.Choice([*TOPICS, CLI_TOPIC]))
@click.option(
    "--schema",
    type=click.Choice(list(SCHEMAS)),
    help="Print the JSON Schema of eval.yaml, a sample file (each JSONL line: its "
    "#/$defs/Sample) or report.json instead, as shipped in the package.",
)
def docs_cmd(topic: str | None, schema: str | None) -> None:
    """Print the reference for TOPIC (assertions, script, judge, cache), or all of it, in
    Markdown — generated from the code, the same text as docs/reference.md. TOPIC cli prints
    every command's usage, options and subcommands (docs/cli.md)."""
    if schema is not None:
        from knowmeter.schemas import shipped_text

        if topic is not None:
            raise click.UsageError("give either a TOPIC or --schema, not both")
        click.echo(shipped_text(schema), nl=False)
        return
    if topic == CLI_TOPIC:
        from knowmeter.cli._help import cli_reference

        click.echo(cli_reference(), nl=False)
        return
    from knowmeter.reference import render

    click.echo(render(topic), nl=False)
