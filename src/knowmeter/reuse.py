"""``eval --control-run RUN``: take the control arm's results from a stored run instead of running
it again — only when everything that changes the control's answers and grades is the same (the
fingerprint); otherwise refuse, naming the fields that differ. The reused records are appended to
the new run's results.jsonl unchanged (same task ids, so the statistics stay paired by sample and
repeat) and run.json records where they came from (``control_reused``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowmeter.errors import InputError
from knowmeter.store import ControlReused, ResultsWriter, TaskRecord, find_run, task_records

if TYPE_CHECKING:
    from knowmeter.config import RunConfig
    from knowmeter.evaluation import Prepared
    from knowmeter.runner import Task
    from knowmeter.store import RunDir, RunRecord


def answer_settings(cfg: RunConfig) -> dict[str, object]:
    """The run settings that change what the agent answers or how it is graded."""
    return {
        "executor_options": cfg.executor_options,
        "timeout_s": cfg.timeout_s,
        "judges": cfg.judges,
        "judge_repeat": cfg.judge_repeat,
        "length_debias": cfg.length_debias,
        "max_graded_output_chars": cfg.max_graded_output_chars,
        "knowledge_dirs": cfg.knowledge_dirs,
        "hedging_judge": cfg.hedging_judge,
        "unsealed": cfg.unsealed,
    }


def control_fingerprint(record: RunRecord) -> dict[str, object]:
    """What must match for a run's control results to stand in for another's (from run.json)."""
    control = record.control
    executor = record.executor
    return {
        "sample set (watermark)": record.watermark.sha256,
        "control variant name": control.name if control else None,
        "control artifact hash": control.hash if control else None,
        "control workspace (cwd) content hash": control.cwd_hash if control else None,
        "executor": executor.name,
        "executor identity and version": executor.identity,
        "model": executor.model,
        "judge and metric prompt hashes": record.prompt_hashes,
        **{f"setting {name}": value for name, value in answer_settings(record.config).items()},
    }


def stored_control(prepared: Prepared, new_record: RunRecord, run: str) -> tuple[RunDir, list[TaskRecord]]:
    """The stored run ``run`` and its control records for this plan's control tasks; refuses
    (``InputError``) a run whose fingerprint differs or that lacks some of those tasks."""
    run_dir = find_run(prepared.config.output_path(), run)
    stored = run_dir.read_run()
    ours, theirs = control_fingerprint(new_record), control_fingerprint(stored)
    differ = [f"{key} ({theirs[key]!r} there, {ours[key]!r} here)" for key in ours if ours[key] != theirs[key]]
    if differ:
        raise InputError(
            f"--control-run {run_dir.id}: its control cannot stand in for this run's; these differ: "
            + "; ".join(differ)
        )
    wanted = {t.id for t in prepared.tasks if t.variant.role == "control"}
    found = {r.task_id: r for r in task_records(run_dir.results_file) if r.task_id in wanted}
    missing = len(wanted) - len(found)
    if missing:
        raise InputError(
            f"--control-run {run_dir.id}: {missing} of this run's {len(wanted)} control tasks have no result "
            "there (more samples or repeats here, or that run is incomplete); run the control again"
        )
    return run_dir, [found[task_id] for task_id in sorted(found)]


def adopt_control(prepared: Prepared, run_dir: RunDir, source: RunDir, records: list[TaskRecord]) -> list[Task]:
    """Store ``records`` (the control's, from ``source``) in the new run and record where they came
    from; returns the tasks still to run (the treatments')."""
    with ResultsWriter(run_dir.results_file) as writer:
        for record in records:
            writer.append(record)
    run = run_dir.read_run()
    stored = source.read_run()
    run.control_reused = ControlReused(run=source.id, created_at=stored.created_at, tasks=len(records))
    run_dir.write_run(run)
    return [t for t in prepared.tasks if t.variant.role != "control"]


def start_reusing(prepared: Prepared) -> tuple[RunDir, list[Task]]:
    """Start the run (``evaluation.start_run``) and return the tasks to execute: all of them, or
    only the treatments' when ``control_run`` is set and its control may stand in (checked before
    the run is stored, so a refusal leaves no empty run)."""
    from knowmeter.evaluation import run_record, start_run

    run = prepared.config.control_run
    if run is None:
        return start_run(prepared), prepared.tasks
    source, records = stored_control(prepared, run_record(prepared, ""), run)
    run_dir = start_run(prepared)
    return run_dir, adopt_control(prepared, run_dir, source, records)
