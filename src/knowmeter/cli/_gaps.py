"""``knowmeter gaps RUN``: the knowledge-gap inventory and classification of a run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from knowmeter.cli._errors import fail, guarded
from knowmeter.cli._output import output_dir_option

if TYPE_CHECKING:
    from knowmeter.report import Report
    from knowmeter.store import RunDir


def gap_report(run_dir: RunDir) -> Report:
    """The stored report of a run that has a gap analysis (``gaps`` and ``sample --from-gaps``
    read it); one line and exit 2 for a run without report.json and for a comprehension run."""
    from knowmeter.report import read_report

    if not run_dir.report_file.exists():
        fail(f"run {run_dir.id} has no report.json yet; run knowmeter report {run_dir.id} first")
    report = read_report(run_dir.report_file, run_dir.id)
    if report.comprehension is not None:
        fail(
            f"run {run_dir.id} is a comprehension run: it has no gap analysis; "
            "name a run of knowmeter eval (knowmeter runs lists them)"
        )
    return report


@click.command("gaps")
@click.argument("run", default="latest")
@click.option("--variant", help="Only this variant.")
@click.option("--limit", type=click.IntRange(1), help="Show at most this many signals per variant.")
@output_dir_option()
@click.option("--json", "as_json", is_flag=True, help="Print the gap and coverage sections as JSON.")
@guarded
def gaps_cmd(run: str, variant: str | None, limit: int | None, output_dir: str, as_json: bool) -> None:
    """Every gap signal of RUN (sample, turn, source, tool, target, context), classified by
    source, with the sample-set watermark; and the knowledge files the agent never used. When
    a probe set (knowmeter probe) was run on the same variant, its gap rate is shown beside the
    human-written samples' — each under its own watermark, never merged."""
    from knowmeter.analysis import render_coverage, render_inventory
    from knowmeter.store import find_run

    run_dir = find_run(Path(output_dir), run)
    report = gap_report(run_dir)
    gaps = [g for g in (report.gaps.variants if report.gaps else []) if variant in (None, g.variant)]
    cov = [c for c in (report.coverage.variants if report.coverage else []) if variant in (None, c.variant)]
    if not gaps:
        names = ", ".join(v.name for v in report.variants)
        fail(f"run {run_dir.id}: no gap analysis for variant {variant!r}; variants: {names}")
    from knowmeter.probe import probe_comparison

    side = probe_comparison(report, run_dir.store, latest=True)
    if side is not None and variant is not None:
        side = side.model_copy(update={"variants": [r for r in side.variants if r.variant == variant]})
    if as_json:
        from knowmeter.cli._output import print_json

        print_json(
            {
                "gaps": [g.to_dict() for g in gaps],
                "coverage": [c.to_dict() for c in cov],
                "probe_comparison": side.model_dump(mode="json") if side else None,
            }
        )
        return
    for s in gaps:
        click.echo(render_inventory(s, limit=limit))
        click.echo()
    for c in cov:
        click.echo(render_coverage(c))
        click.echo()
    if side is not None:
        from knowmeter.report import probe_lines

        click.echo("\n".join(probe_lines(side)))
