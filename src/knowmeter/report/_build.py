"""Building ``report.json`` from a run's stored records (``run.json`` + ``results.jsonl``).

Works from stored results alone, so ``knowmeter report RUN`` re-renders and re-decides without
re-running anything.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from knowmeter._record import RecordError
from knowmeter.config import first_error
from knowmeter.errors import InputError
from knowmeter.report._model import REPORT_SCHEMA_VERSION, Report
from knowmeter.report._summary import summarize_operations
from knowmeter.store import RunDir, TaskRecord

#: An analysis section computed from the run record and its task records (comparison, verdict,
#: gaps, …): returns report fields by name (``statistics``, ``gaps``, ``comprehension``, …).
SectionBuilder = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]


def build_report(
    run_dir: RunDir,
    *,
    sections: list[SectionBuilder] | None = None,
    include_tasks: bool = True,
) -> Report:
    """Build the report from the stored run; ``sections`` add the analysis fields."""
    run = run_dir.read_run()
    problems: list[str] = []
    checked = sorted(_checked_records(run_dir, problems), key=lambda t: (t[1].repeat, t[1].sample_id, t[1].variant))
    records = [rec for rec, _ in checked]
    names = [v["name"] for v in run["variants"]]
    summaries = summarize_operations(records, names)
    variants = [{"name": v["name"], "role": v["role"], "expression": v["expression"], "kind": v["kind"],
                 "artifact_hash": v["hash"], **summaries.get(v["name"], {})} for v in run["variants"]]
    done = {r["task_id"] for r in records}
    executor = dict(run["executor"])
    executor["label"] = executor_label(executor)
    fields: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "run": {
            "id": run["run_id"],
            "created_at": run["created_at"],
            "finished_at": run.get("finished_at"),
            "status": run.get("status"),
            "reported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "versions": run["versions"],
            "git": run["git"],
            "executor": executor,
            "seed": run["seed"],
            "watermark": run["watermark"],
            "sample_set": run.get("sample_set"),
            "config": run["config"],
            "budget": run.get("budget"),
            "tasks_total": run["tasks_total"],
            "tasks_done": len(done),
            "tasks_missing": run["tasks_total"] - len(done),
            "results_problems": problems or None,
            "partial": partial_info(run, records, run_dir.id),
            "wall_s": run.get("wall_s"),
            "judges": run.get("judges", []),
            "prompt_hashes": run.get("prompt_hashes", {}),
            "shard": run.get("shard"),
        },
        "variants": variants,
    }
    for section in sections or []:
        try:
            fields.update(section(run, records))
        except RecordError as exc:
            raise InputError(f"{run_dir.results_file}: {exc}; the results file was edited or damaged: "
                             f"restore it or run knowmeter eval again") from None
    if include_tasks:
        fields["tasks"] = [task for _, task in checked]
    try:
        return Report.model_validate(fields)
    except ValidationError as exc:  # a stored value the checks on read let through (a field added later)
        raise InputError(f"{run_dir.path}: {first_error(exc)}; run.json or results.jsonl was edited or damaged") \
            from None


def partial_info(run: dict[str, Any], records: list[dict[str, Any]], run_id: str) -> dict[str, Any] | None:
    """Why the run covers only part of its tasks (None for a complete run)."""
    missing = run["tasks_total"] - len({r["task_id"] for r in records})
    status = run.get("status")
    if status == "complete" and missing <= 0:
        return None
    refused = (run.get("budget") or {}).get("tasks_not_started_for_budget") or 0
    if status == "incomplete" and refused:
        reason = f"stopped by the budget: {refused} task(s) not started"
    elif status in ("running", None):
        reason = f"the run did not finish (killed, or still running): knowmeter eval --resume {run_id}"
    else:
        reason = f"the run ended {status}: knowmeter eval --resume {run_id} runs the missing tasks"
    with_results = {r["variant"] for r in records}
    return {"reason": reason, "tasks_missing": max(missing, 0),
            "variants_without_results": [v["name"] for v in run["variants"] if v["name"] not in with_results]}


def executor_label(executor: dict[str, Any]) -> str:
    """What kind of agent produced the answers, as far as knowmeter knows."""
    if executor.get("non_llm"):
        return "non-LLM agent (offline retrieval)"
    if executor.get("name") == "script":
        return "command (script protocol; whether it calls a model is not known)"
    return "LLM agent"


def _checked_records(run_dir: RunDir, problems: list[str]) -> list[tuple[dict[str, Any], TaskRecord]]:
    """The run's result records, each checked against the stored-task schema first, so an edited
    or damaged ``results.jsonl`` gets one line naming the task and field, not a traceback. A
    task stored twice counts once (the first record), and ``problems`` says so, as it says which
    lines could not be read."""
    checked = []
    for n, rec in enumerate(run_dir.results(problems), start=1):
        try:
            checked.append((rec, TaskRecord.model_validate(rec)))
        except ValidationError as exc:
            where = f"task {rec['task_id']!r}" if isinstance(rec.get("task_id"), str) else f"record {n}"
            raise InputError(f"{run_dir.results_file}: {where}: {first_error(exc)}; the results file was edited or "
                             "damaged: restore it or run knowmeter eval again") from None
    return _first_of_each_task(checked, problems)


def _first_of_each_task(checked: list[tuple[dict[str, Any], TaskRecord]],
                        problems: list[str]) -> list[tuple[dict[str, Any], TaskRecord]]:
    """One record per task id (the first stored); ``problems`` says how many were dropped."""
    seen: dict[str, int] = {}
    unique = []
    for rec, task in checked:
        seen[task.task_id] = seen.get(task.task_id, 0) + 1
        if seen[task.task_id] == 1:
            unique.append((rec, task))
    dupes = {k: n - 1 for k, n in seen.items() if n > 1}
    if dupes:
        problems.append(f"{sum(dupes.values())} duplicate record(s) of {len(dupes)} task(s) "
                        f"(e.g. {next(iter(dupes))!r}) counted once")
    return unique
