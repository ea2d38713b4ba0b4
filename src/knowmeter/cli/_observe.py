"""``knowmeter observe PATH…``: skill health from real Claude Code / Codex usage traces."""

from __future__ import annotations

import atexit
import gc
from pathlib import Path

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded
from knowmeter.cluster import BACKENDS
from knowmeter.errors import InputError


@click.command("observe")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--last",
    metavar="N[m|h|d|w]",
    help="Only segments that started in the last N minutes, hours, days or weeks (e.g. 7d).",
)
@click.option(
    "--since",
    metavar="WHEN",
    help="Only segments that started at or after WHEN (ISO date or datetime, UTC unless it has an offset).",
)
@click.option(
    "--until", metavar="WHEN", help="Only segments that started before WHEN (a bare date includes that whole day)."
)
@click.option("--skills", metavar="A,B", help="Only these skills (comma-separated); the (no skill) row is left out.")
@click.option(
    "--kb",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Knowledge folder: report which of its files the segments read (coverage).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the health report as JSON.")
@click.option(
    "--html",
    "html",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="Also write the health report as a self-contained HTML page.",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    metavar="N",
    help="Processes sharing the files (default: the number of cores; with --backend ray the chunks are "
    "sized for this many, default the cluster's CPUs).",
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default=defaults.BACKEND,
    show_default=True,
    help="Scan here, or spread the files over a Ray cluster as Ray tasks (pip install 'knowmeter[ray]'; "
    "the files must be at the same path on every node). The report is the same.",
)
@click.option(
    "--ray-address",
    metavar="ADDR",
    help="Ray cluster to run on (HOST:PORT or ray://HOST:PORT; default "
    "RAY_ADDRESS, else a local Ray instance on 127.0.0.1).",
)
@click.option(
    "--count-retried-commands",
    is_flag=True,
    help="Count retried commands (the same test run or commit failing in 3+ turns) as gap signals; by "
    "default they are listed apart and stay out of the gap rates.",
)
@guarded
def observe_cmd(
    paths: tuple[Path, ...],
    last: str | None,
    since: str | None,
    until: str | None,
    skills: str | None,
    kb: Path | None,
    as_json: bool,
    html: Path | None,
    workers: int | None,
    backend: str,
    ray_address: str | None,
    count_retried_commands: bool,
) -> None:
    """Skill health from real usage traces under PATH… (a Claude Code projects folder such as
    ~/.claude/projects, session .jsonl files with their subagents, Codex session folders).

    Each session is cut into segments at every skill start (Skill tool call, /command, read of a
    skill's SKILL.md). Per skill: segments, tool failure rate, knowledge-gap signals and gap
    rates, coverage of --kb, tokens, confidence and a health band — every rate shown with the
    watermark of the trace set it was measured on. The health band is the worse of the weighted
    gap rate (amber from 25%, red from 50%) and the tool failure rate (amber from 10%, red from
    25%); with fewer than 5 segments it is only indicative.
    """
    from knowmeter.api import observe_traces
    from knowmeter.observe import render_health

    # At exit the interpreter collects garbage over every object once more (tens of ms with the
    # analysis loaded); frozen objects are skipped, and the process ends right after anyway.
    atexit.register(gc.freeze)
    if html is not None:
        from knowmeter.cli._output import unwritable

        problem = unwritable(html)
        if problem is not None:  # said before the scan, which can take minutes
            raise InputError(f"--html {html}: {problem}; pass a file in a folder you can write to")
    names = skills.split(",") if skills is not None else None
    report = observe_traces(
        list(paths),
        last=last,
        since=since,
        until=until,
        skills=names,
        kb=kb,
        workers=workers,
        backend=backend,
        ray_address=ray_address,
        count_retried_commands=count_retried_commands,
    )
    if html is not None:
        from knowmeter.report import write_text
        from knowmeter.report.html import render_health_html

        page = render_health_html(report.to_dict())
        try:
            written = write_text(html, page)
        except OSError as exc:  # the disk filled, or the folder changed, since the check above
            raise InputError(
                f"--html {html}: could not be written ({exc.strerror or exc}); free some space or pass another file"
            ) from None
        click.echo(f"html report: {written}", err=as_json)
    if as_json:
        from knowmeter.cli._output import print_json

        print_json(report.to_dict())
        return
    from knowmeter.cli._output import console

    render_health(report, console(markup=True, piped_width=160))  # the health table has 13 columns
