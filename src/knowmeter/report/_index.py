"""A report's rows in the run index (``knowmeter runs``, ``trends``, the viewer), and the index
opened with the means to rebuild itself from the stored reports."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import groupby
from pathlib import Path
from typing import Any

from knowmeter.report._model import Report, VariantOperations
from knowmeter.report._read import read_report
from knowmeter.store import listed_status, open_index


def composite_layer_set(variant: VariantOperations) -> str | None:
    """The layer set the variant's composite was computed from (``fact+behavior``), ``mixed``
    when its results used several, None when nothing was scored."""
    sets = [k for k, n in variant.layer_sets.items() if n and k != "none"]
    return None if not sets else sets[0] if len(sets) == 1 else "mixed"


def not_comparable(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per variant, the layer sets its composites came from when they are not all the same
    (composites from different layer sets are not comparable); a run whose own results used
    several sets (``mixed``) is flagged too."""
    out: dict[str, list[str]] = {}
    key = "variant"
    for variant, group in groupby(sorted(rows, key=lambda r: r[key]), key=lambda r: r[key]):
        sets = sorted({str(r["layer_set"]) for r in group if r["composite"] is not None})
        if len(sets) > 1 or "mixed" in sets:
            out[variant] = sets
    return out


def index_rows(report: Report, run_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The index rows (the run, its variants) of a report."""
    run, wm = report.run, report.run.watermark
    cost_known = [v.cost.known_usd for v in report.variants if v.cost.known_usd is not None]
    gaps = {g.variant: g for g in report.gaps.variants} if report.gaps else {}
    cov = {c.variant: c for c in report.coverage.variants} if report.coverage else {}
    row = {
        "id": run.id,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "status": listed_status(run_path, run.status),
        "dir": str(run_path.resolve()),
        "git_commit": run.git.commit,
        "git_dirty": None if run.git.dirty is None else int(run.git.dirty),
        "executor": run.executor.name,
        "model": run.executor.model,
        "sample_set_id": wm.id,
        "sample_set_sha": wm.sha256,
        "sample_count": wm.count,
        # the decision's verdict: none when nothing was measured, whatever the comparison's level
        "verdict": report.decision.verdict if report.decision else None,
        "outcome": report.decision.outcome if report.decision else None,
        "tasks_total": run.tasks_total,
        "tasks_done": run.tasks_done,
        "cost_known_usd": sum(cost_known) if cost_known else None,
        "cost_unknown_tasks": sum(v.cost.tasks_with_unknown_cost for v in report.variants),
        "shard": f"{run.shard.index}/{run.shard.count}" if run.shard else None,
        # human / probe / mixed (knowmeter probe); None: a run from before knowmeter recorded it
        "sample_set_kind": run.sample_set.kind if run.sample_set else None,
    }
    variant_rows = []
    for v in report.variants:
        g, c = gaps.get(v.name), cov.get(v.name)
        variant_rows.append(
            {
                "run_id": run.id,
                "variant": v.name,
                "role": v.role,
                "artifact_hash": v.artifact_hash,
                "composite": v.layer_means.get("composite"),
                "layer_set": composite_layer_set(v),
                "coverage": c.rate if c else None,
                "gap_rate": g.gap_rate if g else None,
                "weighted_gap_rate": g.weighted_gap_rate if g else None,
                "tasks": v.tasks,
                "errors": v.errors,
                "cost_known_usd": v.cost.known_usd,
                "cost_unknown_tasks": v.cost.tasks_with_unknown_cost,
            }
        )
    return row, variant_rows


def stored_rows(run_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The index rows of a run directory's stored report.json (``InputError`` when unreadable)."""
    return index_rows(read_report(run_path / "report.json", run_path.name), run_path)


@contextmanager
def open_run_index(output_dir: Path) -> Iterator[sqlite3.Connection]:
    """The store's run index; a missing or damaged one is rebuilt from the stored reports."""
    with open_index(output_dir, rows_of=stored_rows) as conn:
        yield conn
