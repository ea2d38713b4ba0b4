"""``knowmeter report RUN``: re-render and re-decide a stored run."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from knowmeter.cli._errors import guarded
from knowmeter.cli._output import ci_output_options, output_dir_option
from knowmeter.cli._settings import setting_options
from knowmeter.settings import REPORT, given


@click.command("report")
@click.argument("run", default="latest")
@output_dir_option()
@setting_options(REPORT)
@click.option("--json", "as_json", is_flag=True, help="Print the report JSON to stdout.")
@click.option(
    "--html",
    "html",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[FILE]",
    help="Also write the self-contained HTML report to FILE (default: report.html in the run directory, "
    "which is rewritten anyway when it exists).",
)
@ci_output_options
@click.option("--report-only", is_flag=True, help="Always exit 0.")
@guarded
def report_cmd(
    run: str,
    output_dir: str,
    as_json: bool,
    html: str | None,
    junit: Path | None,
    markdown: Path | None,
    csv: Path | None,
    report_only: bool,
    **settings: object,
) -> None:
    """Recompute the comparison, verdict and outcome of RUN (an id, a prefix, 'latest' or a run
    directory) from its stored results, without re-running anything.

    Exit codes as for eval: 0 PROGRESS (or a passing SOLO) with every task run and every gate
    passed; 1 any other outcome (an incomplete run included); 2 bad input. A comprehension run's
    as for comprehend: 0 PASS or PROVISIONAL, 2 grader replies that broke the rules twice
    (UNVERIFIED). With --report-only 0. --threshold and --stability-limit do not apply to a
    comprehension run."""
    from knowmeter.api import rescore
    from knowmeter.cli._output import console
    from knowmeter.decision import command_exit_code
    from knowmeter.report import render_terminal
    from knowmeter.store import find_run

    run_dir = find_run(Path(output_dir), run)
    report = rescore(run_dir.path, **given(settings, REPORT))
    comprehension = report.comprehension is not None
    if as_json:
        from knowmeter.cli._output import print_json

        print_json(report.to_dict())
    elif comprehension:
        from knowmeter.comprehension import summary_lines

        click.echo("\n".join(summary_lines(report)))
    else:
        render_terminal(report, console())
    from knowmeter.report import write_outputs

    run_page = run_dir.path / "report.html"
    asked = None if html is None else Path(html) if html else run_page
    for what, path in write_outputs(report, html=asked, junit=junit, markdown=markdown, csv=csv):
        click.echo(f"{what}: {path}", err=as_json)
    if run_page.exists() and (asked is None or asked.resolve() != run_page.resolve()):
        write_outputs(report, html=run_page)  # the run's own page follows the report.json just rewritten
    sys.exit(command_exit_code(report.decision, report_only=report_only))
