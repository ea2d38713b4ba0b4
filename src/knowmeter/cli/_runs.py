"""``knowmeter runs``: list stored runs from the index, and the run directories that have no
index row yet (running, or killed before they finished)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded
from knowmeter.cli._output import output_dir_option


def _cost(r: Any) -> str:
    from knowmeter.report import known_cost_text

    return known_cost_text(r["cost_known_usd"], r["cost_unknown_tasks"])


def _resume(r: Any) -> str:
    """How to continue a killed run: by ``comprehend`` when its run.json is a comprehension run's."""
    from knowmeter.errors import InputError
    from knowmeter.store import RunDir, resume_command

    try:
        comprehension = bool(r["dir"]) and RunDir(Path(r["dir"])).read_run().comprehension is not None
    except InputError:  # run.json unreadable: resume itself names the problem
        comprehension = False
    return resume_command(r["id"], comprehension=comprehension)


def short_time(iso: str | None) -> str:
    """``2026-11-23 16:45`` from a stored ISO timestamp (UTC); ``-`` when missing."""
    return iso[:16].replace("T", " ") if iso else "-"


def run_outcome(r: Any) -> str:
    """The run's outcome as its decision gave it; a run still running or killed (no report yet),
    or indexed before outcomes were stored, says so rather than showing its bare verdict."""
    if r["outcome"]:
        return str(r["outcome"])
    if r["status"] == "running":
        return "not decided yet"
    if r["status"] != "complete":
        return "INCOMPLETE"
    if not r["verdict"]:  # finished, but not in the index (listed from its folder)
        return "not known (not indexed)"
    return f"{r['verdict']} (outcome not recorded)"


@click.command("runs")
@output_dir_option()
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--json", "as_json", is_flag=True, help="Print the runs as a JSON list.")
@guarded
def runs_cmd(output_dir: str, limit: int, as_json: bool) -> None:
    """List stored runs, newest first: id, start, status, outcome (the verdict, or INCOMPLETE,
    NOT MEASURED, JUDGE FAILED, GATE FAILED), tasks done, executor, sample set and known cost.
    A run that is still running, or was killed before it finished, is listed from its folder
    (status running / killed) until it finishes."""
    from knowmeter.cli._output import console, print_json
    from knowmeter.printable import Printer, printable
    from knowmeter.report import open_run_index
    from knowmeter.store import list_runs

    root = Path(output_dir)
    rows: list[dict[str, Any]] = []
    unreadable: list[str] = []
    if root.is_dir():
        with open_run_index(root) as conn:
            rows = list_runs(conn, limit, root / "runs", unreadable)
    if unreadable:  # said on stderr, so that --json stays the list
        names = ", ".join(unreadable[:3]) + (f" and {len(unreadable) - 3} more" if len(unreadable) > 3 else "")
        click.echo(
            printable(
                f"⚠ {len(unreadable)} run folder(s) not listed: their run.json cannot be read ({names}); "
                "knowmeter report ID names the problem"
            ),
            err=True,
        )
    if as_json:
        print_json([{**r, "outcome": run_outcome(r)} for r in rows])
        return
    if not rows:
        click.echo(f"no runs yet in {printable(root)} (run knowmeter eval)")
        return
    out = Printer(console())
    for r in rows:
        shard = f" · shard {r['shard']}" if r["shard"] else ""
        out.line(
            f"{r['id']} · {short_time(r['created_at'])} · {r['status']} · {run_outcome(r)} · "
            f"{r['tasks_done']}/{r['tasks_total']} tasks{shard}"
        )
        out.line(f"{r['executor'] or '-'} · sample set {r['sample_set_id'] or '-'} · cost {_cost(r)}", indent="  ")
        where = "" if output_dir == defaults.OUTPUT_DIR else f" --output-dir {output_dir}"
        if r["status"] == "killed":
            out.line(f"stopped before it finished: continue with {_resume(r)}{where}", indent="  ")
        elif r["status"] != "running" and not r["outcome"] and not r["verdict"]:
            out.line(
                "not in the run index (its report.json unreadable, or the index locked or read-only when it "
                f"finished): knowmeter report {r['id']}{where} writes both again",
                indent="  ",
            )
