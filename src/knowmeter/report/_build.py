"""Building ``report.json`` from a run's stored records (``run.json`` + ``results.jsonl``).

Works from stored results alone, so ``knowmeter report RUN`` re-renders and re-decides without
re-running anything.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from knowmeter import jsonio
from knowmeter._record import RecordError
from knowmeter.config import first_error
from knowmeter.errors import InputError
from knowmeter.report._decision import incompleteness
from knowmeter.report._fold import SectionBuilder, TaskKey
from knowmeter.report._model import REPORT_SCHEMA_VERSION, Report
from knowmeter.report._rows import RowMarks
from knowmeter.report._summary import OperationsSummary
from knowmeter.stats import shared_resamples
from knowmeter.store import RunDir, RunExecutor, RunRecord, StoredTasks, TaskRecord, atomic_file, resume_command


@runtime_checkable
class Announcing(Protocol):
    """A section that can say what it will resample before any section's ``result`` is asked
    for (``knowmeter.stats.shared_resamples``): at any size, each set of resamples is drawn once."""

    def announce(self) -> None: ...


def build_report(run_dir: RunDir, *, sections: list[SectionBuilder] | None = None) -> Report:
    """Build the report from the stored run; ``sections`` add the analysis fields. results.jsonl
    is read once: each record is checked and folded into the operations summary and every
    section as it is read. The report's ``tasks`` are the run's ``StoredTasks`` (read again from
    results.jsonl by a reader that shows them, never all held in memory)."""
    run = run_dir.read_run()
    names = [v.name for v in run.variants]
    operations = OperationsSummary(names)
    rows = RowMarks()  # what the page ranks its rows by: it reads only the rows it shows
    folds = [section(run) for section in sections or []]

    def visit(key: TaskKey, task: TaskRecord) -> None:
        operations.add(key, task)
        rows.add(key, task)
        for fold in folds:
            fold.add(key, task)

    try:
        tasks = StoredTasks(run_dir.results_file, run, visit)
    except RecordError as exc:
        raise InputError(
            f"{run_dir.results_file}: {exc}; the results file was edited or damaged: "
            f"restore it or run knowmeter eval again"
        ) from None
    summaries = operations.result()
    variants = [
        {
            "name": v.name,
            "role": v.role,
            "expression": v.expression,
            "kind": v.kind,
            "artifact_hash": v.hash,
            **summaries.get(v.name, {}),
        }
        for v in run.variants
    ]
    executor = run.executor.model_dump()
    executor["label"] = executor_label(run.executor)

    fields: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "run": {
            "id": run.run_id,
            "created_at": run.created_at,
            "finished_at": run.finished_at,
            "status": run.status,
            "reported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "versions": run.versions,
            "git": run.git,
            "executor": executor,
            "seed": run.seed,
            "watermark": run.watermark,
            "sample_set": run.sample_set,
            "config": run.config,
            "budget": run.budget,
            "tasks_total": run.tasks_total,
            "tasks_done": len(tasks),
            "tasks_missing": run.tasks_total - len(tasks),
            "results_problems": tasks.problems or None,
            "partial": partial_info(run, len(tasks), tasks.variants, run_dir.id),
            "wall_s": run.wall_s,
            "judges": run.judges,
            "prompt_hashes": run.prompt_hashes,
            "shard": run.shard,
            "merged_from": run.merged_from,
            "sequential": run.sequential,
            "control_reused": run.control_reused,
            "subset": run.subset,
        },
        "variants": variants,
    }
    with shared_resamples():  # the sections resample the same samples with one seed: drawn once
        for fold in folds:  # what later sections resample rides along the first section's draw
            if isinstance(fold, Announcing):
                fold.announce()
        for fold in folds:
            try:
                fields.update(fold.result())
            except RecordError as exc:
                raise InputError(
                    f"{run_dir.results_file}: {exc}; the results file was edited or damaged: "
                    f"restore it or run knowmeter eval again"
                ) from None
    try:
        report = Report.model_validate(fields)
    except ValidationError as exc:  # a stored value the checks on read let through (a field added later)
        raise InputError(
            f"{run_dir.path}: {first_error(exc)}; run.json or results.jsonl was edited or damaged"
        ) from None
    report.tasks = tasks  # each record was checked against TaskRecord as StoredTasks read the file
    report.keep_row_index(rows.index())
    report.tasks_file = run_dir.results_file.name  # report.json names it instead of repeating the tasks
    return report


def write_report(path: Path, report: Report) -> None:
    """Write ``report`` as report.json (compact, atomic: a reader never sees half a file), without
    its tasks: they are in the results file ``tasks_file`` names, stored once."""
    with atomic_file(path) as fh:
        fh.write(jsonio.dumps(report.to_dict(tasks=False)) + b"\n")


def partial_info(run: RunRecord, done: int, with_results: set[str], run_id: str) -> dict[str, Any] | None:
    """Why the run covers only part of its tasks (None for a complete run): ``done`` tasks are
    stored, for the variants ``with_results``."""
    missing = run.tasks_total - done
    status = run.status
    refused = run.budget.tasks_not_started_for_budget if run.budget is not None else 0
    kind = incompleteness(status, missing=missing, refused_for_budget=refused)
    if kind is None:
        return None
    resume = resume_command(run_id, comprehension=run.comprehension is not None)
    if kind == "budget":
        reason = f"stopped by the budget: {refused} task(s) not started"
    elif kind == "halted" and run.halted is not None:
        halted = run.halted
        reason = (
            f"stopped early: {halted.reason}; {halted.tasks_not_started} task(s) not started — "
            f"fix the cause, then {resume} runs them"
        )
    elif kind == "killed":
        reason = f"the run did not finish (killed, or still running): {resume}"
    elif kind == "records_missing":
        reason = (
            f"{missing} task(s) have no readable record in results.jsonl (see results_problems): "
            f"{resume} runs them again"
        )
    else:
        reason = f"the run ended {status}: {resume} runs the missing tasks"
    return {
        "reason": reason,
        "tasks_missing": max(missing, 0),
        "variants_without_results": [v.name for v in run.variants if v.name not in with_results],
    }


def executor_label(executor: RunExecutor) -> str:
    """What kind of agent produced the answers, as far as knowmeter knows."""
    if executor.name == "echo":
        return "harness check (echo: each answer is its prompt; no model)"
    if executor.non_llm:
        return "non-LLM agent (offline retrieval)" if executor.name == "offline" else "non-LLM agent"
    if executor.name == "script":
        return "command (script protocol; whether it calls a model is not known)"
    return "LLM agent"
