"""``knowmeter runs``: list stored runs from the index."""

from __future__ import annotations

from pathlib import Path

import click

from knowmeter.cli._errors import guarded


@click.command("runs")
@click.option("--output-dir", default=".knowmeter", show_default=True, help="Where runs are stored.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000))
@guarded
def runs_cmd(output_dir: str, limit: int) -> None:
    """List stored runs, newest first."""
    from rich.console import Console
    from rich.table import Table

    from knowmeter.store import list_runs, open_index

    root = Path(output_dir)
    if not root.is_dir():
        click.echo(f"no runs yet in {root} (run knowmeter eval)")
        return
    with open_index(root) as conn:
        rows = list_runs(conn, limit)
    if not rows:
        click.echo(f"no runs yet in {root} (run knowmeter eval)")
        return
    table = Table()
    for col in ("run", "created", "status", "verdict", "tasks", "executor", "sample set", "cost (known)"):
        table.add_column(col)
    for r in rows:
        cost = "unknown" if r["cost_known_usd"] is None else f"{r['cost_known_usd']:.4f}"
        if r["cost_unknown_tasks"]:
            cost += f" (+{r['cost_unknown_tasks']} unknown)"
        table.add_row(r["id"], r["created_at"], r["status"], r["verdict"] or "-",
                      f"{r['tasks_done']}/{r['tasks_total']}", r["executor"] or "-", r["sample_set_id"] or "-", cost)
    Console(width=160).print(table)
