"""``knowmeter view``: the local read-only viewer."""

from __future__ import annotations

from pathlib import Path

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded
from knowmeter.cli._output import output_dir_option


@click.command("view")
@output_dir_option()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=defaults.VIEWER_PORT,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--host",
    default=defaults.VIEWER_HOST,
    show_default=True,
    help="Address to bind. Anything but loopback exposes your runs to the network (a warning says so).",
)
@guarded
def view_cmd(output_dir: str, port: int, host: str) -> None:
    """Browse stored runs in a local, read-only web viewer: the runs list (from the run index),
    each run's report, two runs compared, and trends per sample set."""
    from knowmeter.viewer import LOOPBACK, make_server

    if host not in LOOPBACK:
        click.echo(
            f"warning: serving on {host}: anyone who can reach this machine can read your runs "
            f"(outputs, traces, configs). Use the default {defaults.VIEWER_HOST} unless you mean it.",
            err=True,
        )
    try:
        server = make_server(Path(output_dir), host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}; choose another --port") from None
    click.echo(f"knowmeter view: {server.url} (read-only; Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
