"""``knowmeter merge RUN…``: one run, with one report, from the shards of one plan."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from knowmeter.cli._errors import guarded
from knowmeter.cli._output import ci_output_options, output_dir_option


@click.command("merge")
@click.argument("runs", nargs=-1, required=True)
@output_dir_option("Where run ids are looked up (a RUN may also be a run directory).")
@click.option(
    "--into",
    type=click.Path(path_type=Path, file_okay=False),
    help="The store that receives the merged run (default: --output-dir).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the merged run's report JSON to stdout.")
@ci_output_options
@click.option("--report-only", is_flag=True, help="Always exit 0 after a merge (report, do not gate).")
@guarded
def merge_cmd(
    runs: tuple[str, ...],
    output_dir: str,
    into: Path | None,
    as_json: bool,
    junit: Path | None,
    markdown: Path | None,
    csv: Path | None,
    report_only: bool,
) -> None:
    """Merge the runs of every shard of one plan (knowmeter eval --shard I/N) into one run of the
    whole plan, with one report, in <--into>/runs/. The shards' own runs are left as they are.

    Refuses, with one line, runs that are not shards, shards of different plans (config, samples,
    variants, executor identity or seed differ), a shard missing or given twice, and a task
    present in two shards. knowmeter report, gaps, view … then work on the merged run as on any
    other.

    Exit codes as for eval: 0 PROGRESS (or a passing SOLO) with every task of the plan run and
    every gate passed; 1 any other outcome; 2 bad input or a refused merge. With --report-only 0
    after a merge."""
    from knowmeter.api import Listener, merge
    from knowmeter.cli._output import console
    from knowmeter.cli._run import print_report
    from knowmeter.decision import command_exit_code
    from knowmeter.printable import printable
    from knowmeter.report import write_outputs

    err = console(stderr=True)

    class Notes(Listener):
        def note(self, line: str) -> None:
            err.print(printable(line), soft_wrap=True)

    store = into if into is not None else Path(output_dir)
    report = merge(runs, output_dir=output_dir, into=store, listener=Notes())
    run_dir = store / "runs" / report.run.id
    written = write_outputs(report, html=run_dir / "report.html", junit=junit, markdown=markdown, csv=csv)
    err.print(
        f"merged {len(runs)} shards into run {report.run.id}: {report.run.tasks_done}/{report.run.tasks_total} tasks",
        soft_wrap=True,
    )
    print_report(report, run_dir / "report.json", written, quiet=False, as_json=as_json)
    sys.exit(command_exit_code(report.decision, report_only=report_only))
