"""``eval --sequential``: run the planned tasks in batches of samples, in a random order fixed by the
seed, and look after each batch (``knowmeter.compare.take_look``) until the answer is clear, the
planned N cannot reach it, or every sample ran. Each look is written to run.json (``sequential``);
a run stopped early records the tasks it ran as its ``tasks_total``, so it is complete, and the
report decides its verdict at the stopping look's level (``CompareConfig.sequential_alpha``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import numpy as np

from knowmeter.compare import Observation, SequentialRecord, new_record, take_look
from knowmeter.runner import ExecutionStats
from knowmeter.store import task_records

if TYPE_CHECKING:
    from knowmeter.evaluation import Prepared
    from knowmeter.runner import Budget, Task
    from knowmeter.store import RunDir

RunBatch = Callable[[list["Task"]], Awaitable[tuple[ExecutionStats, "Budget"]]]


def sequential_batches(prepared: Prepared) -> tuple[SequentialRecord, list[list[Task]]]:
    """The design (``--sequential-design``, ``--futility``; its looks from ``min_pairs`` on) and the
    tasks of each batch: every variant and repeat of the batch's samples, in the plan's order."""
    cfg = prepared.config
    ids = list(dict.fromkeys(t.sample.sample_id for t in prepared.tasks))
    order = [ids[i] for i in np.random.default_rng(cfg.seed).permutation(len(ids))]
    record = new_record(len(ids), cfg.min_pairs, cfg.seed, design=cfg.sequential_design, futility=cfg.futility)
    rank = {sample_id: i for i, sample_id in enumerate(order)}
    starts = [0, *record.look_samples[:-1]]
    batches = [
        [t for t in prepared.tasks if start <= rank[t.sample.sample_id] < end]
        for start, end in zip(starts, record.look_samples, strict=True)
    ]
    return record, batches


def _look(prepared: Prepared, run_dir: RunDir, record: SequentialRecord) -> None:
    """Take the next look over the stored results and write it to run.json."""
    from knowmeter.report import compare_config, observations

    run = run_dir.read_run()
    by_variant: dict[str, list[Observation]] = {v.name: [] for v in prepared.variants}
    for obs in observations(task_records(run_dir.results_file)):
        by_variant.setdefault(obs.variant, []).append(obs)
    control = next((v.name for v in prepared.variants if v.role == "control"), prepared.variants[0].name)
    treatments = {name: obs for name, obs in by_variant.items() if name != control}
    take_look(by_variant[control], treatments, record, compare_config(run), control=control)
    run.sequential = record
    run_dir.write_run(run)


async def run_looks(
    prepared: Prepared,
    run_dir: RunDir,
    run_batch: RunBatch,
    todo: list[Task],
    note: Callable[[str], None] = lambda line: None,
) -> tuple[ExecutionStats, Budget]:
    """Run the tasks ``todo`` batch by batch with ``run_batch``, looking after each batch, and stop
    early when a look says so (or the budget or ``--max-errors`` stopped tasks); returns the summed
    statistics (the later batches' tasks count as not started). Tasks not in ``todo`` are stored
    already (a ``--control-run``'s control): a batch runs only the rest, and a look pairs them
    with the samples run so far. A resumed run continues its stored
    looks: it runs what is missing of the first batch not yet looked at, and looks on from there.
    ``note`` hears where and why the run stopped."""
    import anyio

    record, batches = sequential_batches(prepared)
    stored = run_dir.read_run().sequential
    if stored is not None:
        record = stored
    waiting = {t.id for t in todo}
    total = ExecutionStats()
    ran = sum(len(tasks) for tasks in batches[: len(record.looks)])
    budget: Budget | None = None
    pending = [] if record.stopped else batches[len(record.looks) :]
    for k, tasks in enumerate(pending):
        stats, budget = await run_batch([t for t in tasks if t.id in waiting])
        for name in ("done", "errors", "cached", "retries", "wall_s"):
            setattr(total, name, getattr(total, name) + getattr(stats, name))
        total.not_started += stats.not_started
        total.halted, total.halted_tasks = stats.halted, total.halted_tasks + stats.halted_tasks
        ran += len(tasks)
        if stats.not_started or stats.halted is not None:
            later = [t.id for rest in pending[k + 1 :] for t in rest if t.id in waiting]
            if stats.halted is not None:  # the later batches were not started either
                total.halted_tasks += later
            else:
                total.not_started += later
            break
        await anyio.to_thread.run_sync(_look, prepared, run_dir, record)
        if record.stopped is not None:
            break
    if record.stopped is not None and ran < len(prepared.tasks):
        # the later batches' tasks stored before this run went (a reused control's) count too
        stored_later = sum(t.id not in waiting for rest in batches[len(record.looks) :] for t in rest)
        run = run_dir.read_run()
        run.tasks_total = ran + stored_later
        run_dir.write_run(run)
        note(f"sequential: {record.reason}")
    if budget is None:  # every batch was looked at before: nothing ran
        _, budget = await run_batch([])
    return total, budget
