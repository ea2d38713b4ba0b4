"""``knowmeter init``: scaffold the offline demo."""

from __future__ import annotations

from pathlib import Path

import click

from knowmeter.cli._errors import guarded


@click.command("init")
@click.argument("directory", default=".", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@guarded
def init_cmd(directory: Path, force: bool) -> None:
    """Scaffold a runnable demo in DIRECTORY: a knowledge base, two versions of a support
    skill, 23 samples and an eval.yaml that uses the offline agent. Then: knowmeter eval."""
    from knowmeter.demo import scaffold

    written = scaffold(directory, force=force)
    click.echo(f"wrote {len(written)} files to {directory}")
    click.echo(f"next: cd {directory} && knowmeter eval")
