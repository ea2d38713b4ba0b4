"""``run_activation`` / ``resume_activation``: plan (or re-plan a stored run), execute the tasks
left on the runner (the run locked meanwhile), then write the report. After Ctrl-C or SIGTERM
the finished tasks are kept and reported, and ``ActivationInterrupted`` is raised."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowmeter.activation._model import ActivationReport
from knowmeter.activation._report import activation_report
from knowmeter.activation._run import (
    ActivationPlan,
    Target,
    make_config,
    make_detector,
    prepare_activation,
    start_activation,
)
from knowmeter.errors import InputError
from knowmeter.runner import Task
from knowmeter.store import RunDir, RunRecord, find_run

if TYPE_CHECKING:
    from knowmeter.evaluation import Prepared

__all__ = ["ActivationInterrupted", "OnStart", "activation_store", "resume_activation", "run_activation"]

#: called with the plan, the run's folder and the number of tasks left, before the first task
OnStart = Callable[[ActivationPlan, RunDir, int], None]


class ActivationInterrupted(KeyboardInterrupt):
    """The run was stopped (Ctrl-C / SIGTERM: ``signum``); ``report`` holds what finished."""

    def __init__(self, run_dir: RunDir, report: ActivationReport, signum: int) -> None:
        super().__init__(f"run {run_dir.id} interrupted")
        self.run_dir, self.report, self.signum = run_dir, report, signum


def activation_store(output_dir: str | Path) -> Path:
    """Where activation runs are stored: ``<output_dir>/activation/runs/<id>``."""
    return Path(output_dir) / "activation"


def _execute(plan: ActivationPlan, run_dir: RunDir, tasks: list[Task]) -> ActivationReport:
    import signal

    import anyio

    from knowmeter.evaluation import execute, run_budget
    from knowmeter.runner import RunStopped, until_interrupted

    run_dir.lock()
    try:
        budget = run_budget(plan.prepared)
        detector = make_detector(plan)
        try:
            anyio.run(
                lambda: until_interrupted(
                    lambda: execute(plan.prepared, run_dir, tasks, post_process=detector, budget=budget)
                )
            )
        except KeyboardInterrupt as stop:
            signum = stop.signum if isinstance(stop, RunStopped) else signal.SIGINT
            raise ActivationInterrupted(run_dir, activation_report(run_dir), signum) from None
    finally:
        run_dir.unlock()
    return activation_report(run_dir)


def run_activation(
    target: Target,
    *,
    base_dir: Path,
    executor: str,
    executor_options: dict[str, Any] | None = None,
    on_start: OnStart | None = None,
    **settings: Any,
) -> tuple[RunDir, ActivationReport]:
    """Run every case × repeat × version of ``target``; return the run's folder and report.
    ``settings`` are ``RunConfig`` fields (model, repeat, concurrency, timeout_s, retry, no_cache,
    budget_total_usd, seed, output_dir)."""
    config = make_config(
        base_dir=base_dir, target=target, executor=executor, executor_options=dict(executor_options or {}), **settings
    )
    plan = prepare_activation(config, target)
    run_dir = start_activation(plan, activation_store(config.output_path()) / "runs")
    if on_start is not None:
        on_start(plan, run_dir, len(plan.prepared.tasks))
    return run_dir, _execute(plan, run_dir, plan.prepared.tasks)


def resume_activation(
    run: str,
    *,
    output_dir: str | Path,
    executor_options: dict[str, Any] | None = None,
    on_start: OnStart | None = None,
) -> tuple[RunDir, ActivationReport]:
    """Continue a stored activation run: only its missing tasks run. ``executor_options`` are set
    over the stored ones (a key redacted when the run was stored must be given again). Refused
    when the cases or a version of the skill changed since the run started."""
    from knowmeter.config import REDACTED, restore_secrets
    from knowmeter.evaluation import resume_run

    run_dir = find_run(activation_store(output_dir), run)
    record = run_dir.read_run()
    stored = record.activation
    if stored is None:
        raise InputError(f"run {run_dir.id} is not an activation run; resume it with knowmeter eval --resume")
    config = record.config.model_copy()
    config.executor_options = {**config.executor_options, **(executor_options or {})}
    if REDACTED in str(config.executor_options):
        config = restore_secrets(config, str(run_dir.run_file))
    t = stored.target
    target = Target(
        t.skill,
        tuple(t.case_files),
        t.against,
        t.description,
        tuple(t.skills_dirs),
        tuple(t.distractors),
        t.counts,
        t.split,
    )
    made: list[ActivationPlan] = []

    def reprepare(_: RunRecord) -> Prepared:
        made.append(prepare_activation(config, target))
        return made[0].prepared

    _, tasks = resume_run(run_dir, reprepare)
    if on_start is not None:
        on_start(made[0], run_dir, len(tasks))
    return run_dir, _execute(made[0], run_dir, tasks)
