"""The end-of-run stages (compare → decide → render → store), sequenced by ``knowmeter.api`` after
the per-task post-processing (``knowmeter.postprocess``). Built from a run's stored configuration
and results only, so a resumed run or ``knowmeter report`` does exactly what the original run
would have done."""

from __future__ import annotations

from pathlib import Path

from knowmeter.decision import gated_rates, settle
from knowmeter.errors import InputError
from knowmeter.gates import evolution_nudges
from knowmeter.gold import StoredGold, read_stored_gold
from knowmeter.report import (
    NO_OVERRIDES,
    Report,
    ReportOverrides,
    SectionBuilder,
    build_report,
    comparison_section,
    gaps_section,
    index_rows,
    open_run_index,
    resources_section,
    write_report,
)
from knowmeter.store import BudgetStatus, RunDir, RunRecord, upsert_run, utc_timestamp, variant_history


def finalize(
    run_dir: RunDir, *, status: str, wall_s: float | None = None, budget: BudgetStatus | None = None
) -> Report:
    """Mark the run finished, build and store report.json, update the index."""
    record = run_dir.read_run()
    record.status = status
    record.finished_at = utc_timestamp()
    if wall_s is not None:
        record.wall_s = round((record.wall_s or 0.0) + wall_s, 3)
    if budget is not None:
        record.budget = budget
    run_dir.write_run(record)
    sections = report_sections(run=record, gold=read_stored_gold(run_dir.path))
    return _store_report(run_dir, build_report(run_dir, sections=sections))


def rebuild_report(run_dir: RunDir, overrides: ReportOverrides = NO_OVERRIDES) -> Report:
    """Recompute report.json from stored results (``knowmeter report``), with overrides; refused
    (``InputError``) while a process executes the run (it writes the report when it ends)."""
    if run_dir.executing:
        raise InputError(
            f"run {run_dir.id} is still being executed by another knowmeter process; its report is written "
            "when it finishes: wait for it (knowmeter runs shows it running), then run this again"
        )
    sections = report_sections(overrides, run=run_dir.read_run(), gold=read_stored_gold(run_dir.path))
    return _store_report(run_dir, build_report(run_dir, sections=sections))


def _store_report(run_dir: RunDir, report: Report) -> Report:
    """Gate and decide the built report, write report.json, index the run."""
    apply_gates(report, run_dir.store)
    add_probe_comparison(report, run_dir.store)
    write_report(run_dir.report_file, report)
    index_run(run_dir, report)
    return report


def add_probe_comparison(report: Report, store: Path | None) -> None:
    """Set ``probe_comparison`` (the probe gap rate beside the human-sample gap rate, from runs
    made before this one in ``store``) when there is something to compare."""
    from knowmeter.probe import probe_comparison

    if report.gaps is None:  # a comprehension run: no gap rate to put beside another
        return
    report.probe_comparison = probe_comparison(report, store)


def report_sections(
    overrides: ReportOverrides = NO_OVERRIDES, *, run: RunRecord | None = None, gold: StoredGold | None = None
) -> list[SectionBuilder]:
    """The analysis sections of report.json, in order (a comprehension run's own for one);
    ``gold`` is the run's stored gold comparison (``gold.json``)."""
    if run is not None and run.comprehension is not None:
        from knowmeter.comprehension import comprehension_section

        return [comprehension_section(overrides)]
    # results are computed in this order, each section's inputs freed after its own: the
    # light one first, so the comparison's and resources' resampling holds fewer inputs alive
    return [gaps_section, comparison_section(overrides, gold), resources_section(overrides)]


def apply_gates(report: Report, store: Path | None) -> None:
    """Gate and decide the report (``knowmeter.decision.settle``) against earlier complete runs on
    the same sample set (in ``store``, the run's own store; None: no history), and set its
    ``notes`` (the sample-evolution nudge, complete runs only)."""
    run = report.run
    history: dict[str, list[tuple[str, float | None]]] = {}
    if store is not None:
        with open_run_index(store) as conn:
            for row in variant_history(conn, sample_set_id=run.watermark.id):
                if row["run_id"] != run.id and row["created_at"] <= run.created_at:
                    history.setdefault(row["variant"], []).append((row["run_id"], row["gap_rate"]))
    settle(report, {v: h[-1] for v, h in history.items() if h})
    rates = gated_rates(report)
    report.notes = evolution_nudges({v: [r for _, r in h] for v, h in history.items()}, rates) if run.complete else []


def index_run(run_dir: RunDir, report: Report) -> None:
    """Write the run and its per-variant figures into its store's SQLite index (the store the run
    directory is in — never a path recorded in run.json, which a moved or edited folder makes wrong)."""
    if run_dir.store is None:
        return  # a run directory outside a store (copied alone): nothing to index
    with open_run_index(run_dir.store) as conn:
        upsert_run(conn, *index_rows(report, run_dir.path))
