"""Merging the shards of one plan (``knowmeter eval --shard I/N`` runs) into one run directory,
refusing, with one line each, shards of different plans, a missing or duplicated shard, and a
task present in two shards."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from knowmeter import jsonio
from knowmeter.errors import InputError
from knowmeter.store._rundir import ResultsWriter, RunDir, new_run_id
from knowmeter.store._runrecord import (
    BudgetStatus,
    CallSpend,
    MergedShard,
    RunRecord,
    ShardInfo,
    plan_hash,
    plan_parts,
    utc_timestamp,
)
from knowmeter.store._storedtasks import task_records


def _shard_record(run_dir: RunDir) -> tuple[RunRecord, ShardInfo]:
    """The run.json of a shard and its shard block, checked to be one (and unedited)."""
    record = run_dir.read_run()
    shard = record.shard
    if shard is None:
        raise InputError(
            f"run {run_dir.id} is not a shard (it was not run with knowmeter eval --shard I/N); "
            "merge takes every shard of one sharded plan"
        )
    if plan_hash(record) != shard.plan_hash:
        raise InputError(
            f"run {run_dir.id}: its run.json does not match the plan hash recorded in it; "
            "the file was edited or damaged"
        )
    return record, shard


def _differences(a: object, b: object, path: str = "") -> list[str]:
    """Where two plans differ, to the setting: ``config.repeat 1 vs 2``."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(a.keys() | b.keys())
        return [d for k in keys for d in _differences(a.get(k), b.get(k), f"{path}.{k}" if path else k)]
    return [] if a == b else [f"{path} {jsonio.shown(a)} vs {jsonio.shown(b)}"]


_Shard = tuple[RunDir, RunRecord, ShardInfo]


def _check_plan(runs: list[_Shard]) -> list[_Shard]:
    """The shards sorted by index, after checking they are exactly shards 1..N of one plan."""
    first_dir, first, first_shard = runs[0]
    count = first_shard.count
    for run_dir, record, shard in runs[1:]:
        if shard.plan_hash != first_shard.plan_hash:
            differ = ", ".join(_differences(plan_parts(first), plan_parts(record)))
            raise InputError(
                f"runs {first_dir.id} and {run_dir.id} are shards of different plans (they differ "
                f"in: {differ}); merge the shards of one plan (same config, samples, variants, "
                "executor and seed)"
            )
        if shard.count != count:
            raise InputError(
                f"run {first_dir.id} is shard {first_shard.index}/{count} but run {run_dir.id} "
                f"is shard {shard.index}/{shard.count}; merge the shards "
                "of one split"
            )
    by_index: dict[int, RunDir] = {}
    for run_dir, _, shard in runs:
        index = shard.index
        if index in by_index:
            raise InputError(
                f"shard {index}/{count} is given twice (runs {by_index[index].id} and {run_dir.id}); "
                "pass each shard once"
            )
        by_index[index] = run_dir
    missing = [str(i) for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise InputError(
            f"shard {', '.join(missing)} of {count} is missing (given: "
            f"{', '.join(str(i) for i in sorted(by_index))}); pass all {count} shards"
        )
    return sorted(runs, key=lambda r: r[2].index)


def _merged_calls(budgets: list[BudgetStatus]) -> dict[str, CallSpend]:
    """The shards' model calls by kind, added up (the highest single cost is the highest of any)."""
    calls: dict[str, CallSpend] = {}
    for budget in budgets:
        for kind, c in budget.calls.items():
            was = calls.get(kind)
            if was is None:
                calls[kind] = c.model_copy()
                continue
            highest = [m for m in (was.max_cost_usd, c.max_cost_usd) if m is not None]
            calls[kind] = CallSpend(
                known_cost=was.known_cost + c.known_cost,
                unknown_cost=was.unknown_cost + c.unknown_cost,
                spent_known_usd=was.spent_known_usd + c.spent_known_usd,
                max_cost_usd=max(highest) if highest else None,
            )
    return calls


def _merged_budget(shards: list[_Shard]) -> BudgetStatus | None:
    """What the shards spent, added up — the merged run's spend, as a straight run of the plan
    records it. The limits were each shard's own: the total is theirs added up (None when a shard
    had none); each shard's record stays in ``merged_from``. None when a shard recorded no spend
    (a knowmeter from before it did): the sum would be unknown."""
    budgets = [r.budget for _, r, _ in shards]
    if any(b is None for b in budgets):
        return None
    known = [b for b in budgets if b is not None]
    totals = [b.total_usd for b in known]
    total = None if any(t is None for t in totals) else sum(t for t in totals if t is not None)
    per_task = {b.per_task_usd for b in known}
    spent = sum(b.spent_known_usd for b in known)
    notes = [f"shard {s.index}/{s.count}: {r.budget.note}" for _, r, s in shards if r.budget and r.budget.note]
    return BudgetStatus(
        total_usd=total,
        per_task_usd=per_task.pop() if len(per_task) == 1 else None,
        spent_known_usd=spent,
        tasks_with_known_cost=sum(b.tasks_with_known_cost for b in known),
        tasks_with_unknown_cost=sum(b.tasks_with_unknown_cost for b in known),
        tasks_not_started_for_budget=sum(b.tasks_not_started_for_budget for b in known),
        calls=_merged_calls(known),
        calls_one_at_a_time=sum(b.calls_one_at_a_time for b in known),
        in_flight_calls=sum(b.in_flight_calls for b in known),
        in_flight_charged_usd=sum(b.in_flight_charged_usd for b in known),
        in_flight_unknown_cost=sum(b.in_flight_unknown_cost for b in known),
        overshoot_usd=(max(0.0, spent - total) or None) if total is not None else None,
        note=f"summed over {len(shards)} shards, each under its own budget (merged_from)"
        + (": " + "; ".join(notes) if notes else ""),
    )


def _merged_record(run_id: str, shards: list[_Shard], done: int) -> RunRecord:
    """run.json of the merged run: the first shard's, as one unsharded run of the whole plan."""
    first, first_shard = shards[0][1], shards[0][2]
    total = sum(r.tasks_total for _, r, _ in shards)
    complete = all(r.status == "complete" for _, r, _ in shards) and done >= total
    record = first.model_copy()
    record.run_id, record.created_at = run_id, utc_timestamp()
    record.status = "complete" if complete else "incomplete"
    record.config = first.config.model_copy()
    record.config.shard = None
    record.tasks_total = total
    record.wall_s = None  # the shards ran in separate jobs: no one wall time covers them
    record.budget = _merged_budget(shards)
    record.merged_from = [
        MergedShard(
            run_id=d.id,
            shard=f"{s.index}/{s.count}",
            status=r.status,
            created_at=r.created_at,
            finished_at=r.finished_at,
            tasks_total=r.tasks_total,
            wall_s=r.wall_s,
            budget=r.budget,
            git=r.git,
        )
        for d, r, s in shards
    ]
    record.plan_hash = first_shard.plan_hash
    record.unset("shard")
    record.unset("finished_at")
    return record


def merge_shards(run_dirs: list[RunDir], runs_root: Path) -> tuple[RunDir, list[str]]:
    """Merge every shard of one plan into a new run directory in ``runs_root`` (its run.json and
    results.jsonl; the report is built by the caller). Returns the run and notes on result lines
    that could not be read (skipped, as a report of the shard skips them). Nothing is written
    when a check refuses the merge."""
    if not run_dirs:
        raise InputError("no runs to merge; pass the run of every shard")
    shards = _check_plan([(d, *_shard_record(d)) for d in run_dirs])
    runs_root.mkdir(parents=True, exist_ok=True)
    tmp = RunDir(runs_root / f".merge-{secrets.token_hex(4)}")
    tmp.path.mkdir()
    notes: list[str] = []
    try:
        owner: dict[str, str] = {}
        with ResultsWriter(tmp.results_file) as writer:
            for run_dir, _, _ in shards:
                problems: list[str] = []
                for result in task_records(run_dir.results_file, problems):
                    task = result.task_id
                    earlier = owner.setdefault(task, run_dir.id)
                    if earlier != run_dir.id:
                        raise InputError(
                            f"task {task!r} is in two shards (runs {earlier} and {run_dir.id}); "
                            "the shards were edited or not cut from one plan"
                        )
                    writer.append(result)
                notes += [f"run {run_dir.id}: results.jsonl {p}" for p in problems]
        run_id = new_run_id()
        while (runs_root / run_id).exists():
            run_id = new_run_id()
        tmp.write_run(_merged_record(run_id, shards, len(owner)))
        os.rename(tmp.path, runs_root / run_id)
    except BaseException:
        shutil.rmtree(tmp.path, ignore_errors=True)
        raise
    return RunDir(runs_root / run_id), notes
