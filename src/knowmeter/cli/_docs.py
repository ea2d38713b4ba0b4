"""``knowmeter docs [TOPIC]``: the generated reference (assertion types, script protocol, judge
replies, response cache)."""

from __future__ import annotations

import click

from knowmeter.reference import TOPICS


@click.command("docs")
@click.argument("topic", required=False, type=click.Choice(TOPICS))
def docs_cmd(topic: str | None) -> None:
    """Print the reference for TOPIC (assertions, script, judge, cache), or all of it, in
    Markdown — generated from the code, the same text as docs/reference.md."""
    from knowmeter.reference import render

    click.echo(render(topic), nl=False)
