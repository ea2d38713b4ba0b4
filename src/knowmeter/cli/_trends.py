"""``knowmeter trends``: the gap-signal spec §6 table across runs."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

import click

from knowmeter.cli._errors import guarded


@click.command("trends")
@click.option("--variant", help="Only this variant.")
@click.option("--sample-set", "sample_set", help="Only runs on this sample set (id like file@hash8, or a hash prefix).")
@click.option("--output-dir", default=".knowmeter", show_default=True, help="Where runs are stored.")
@guarded
def trends_cmd(variant: str | None, sample_set: str | None, output_dir: str) -> None:
    """Composite, coverage and gap rate across completed runs, one table per sample set: runs
    on different sample sets are never mixed in one table."""
    from rich.console import Console
    from rich.table import Table

    from knowmeter.report._terminal import percent
    from knowmeter.store import open_index, variant_history
    from knowmeter.watermark import WATERMARK_WARNING

    root = Path(output_dir)
    if not root.is_dir():
        click.echo(f"no runs yet in {root} (run knowmeter eval)")
        return
    with open_index(root) as conn:
        rows = variant_history(conn, variant=variant, sample_set_id=sample_set)
    if not rows:
        click.echo("no completed runs match")
        return
    console = Console(width=160)
    rows.sort(key=lambda r: (r["sample_set_id"] or "", r["created_at"], r["run_id"]))
    groups = [(k, list(g)) for k, g in groupby(rows, key=lambda r: r["sample_set_id"])]
    if len(groups) > 1:
        console.print(f"{len(groups)} different sample sets: shown as separate tables (numbers from different "
                      "sample sets are not comparable)")
    for set_id, group in groups:
        table = Table(title=f"sample set {set_id} · {group[0]['sample_count']} samples", title_justify="left")
        for col in ("time", "git commit", "variant", "composite", "coverage", "gap_rate", "weighted", "sample set",
                    "samples", "cost"):
            table.add_column(col)
        for r in group:
            commit = (r["git_commit"] or "-")[:10] + ("+dirty" if r["git_dirty"] else "")
            cost = "unknown" if r["cost_known_usd"] is None else f"{r['cost_known_usd']:.4f}"
            if r["cost_unknown_tasks"]:
                cost += f" +{r['cost_unknown_tasks']} unknown"
            table.add_row(r["created_at"], commit, r["variant"],
                          "unknown" if r["composite"] is None else f"{r['composite']:.2f}",
                          percent(r["coverage"]), percent(r["gap_rate"]), percent(r["weighted_gap_rate"]), set_id,
                          str(r["sample_count"]), cost)
        console.print(table)
    console.print(f"⚠ {WATERMARK_WARNING}")
