"""``run_activation``: plan, execute on the runner (locked run, budget, interrupt handling),
then write the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowmeter.activation._model import ActivationReport
from knowmeter.activation._report import activation_report
from knowmeter.activation._run import Target, make_config, make_detector, prepare_activation, start_activation
from knowmeter.store import RunDir

__all__ = ["run_activation"]


def run_activation(
    target: Target,
    *,
    base_dir: Path,
    executor: str,
    executor_options: dict[str, Any] | None = None,
    on_start: Any = None,
    **settings: Any,
) -> tuple[RunDir, ActivationReport]:
    """Run every case × repeat × arm of ``target`` and return the run's folder and report.
    ``settings`` are ``RunConfig`` fields (model, repeat, concurrency, timeout_s, retry, no_cache,
    budget_total_usd, seed, output_dir); ``on_start(plan, run_dir)`` is called before the first task."""
    import anyio

    from knowmeter.evaluation import execute, run_budget
    from knowmeter.runner import until_interrupted

    config = make_config(
        base_dir=base_dir, target=target, executor=executor, executor_options=dict(executor_options or {}), **settings
    )
    plan = prepare_activation(config, target)
    run_dir = start_activation(plan)
    if on_start is not None:
        on_start(plan, run_dir)
    run_dir.lock()
    try:
        budget = run_budget(plan.prepared)
        detector = make_detector(plan)
        anyio.run(
            lambda: until_interrupted(
                lambda: execute(plan.prepared, run_dir, plan.prepared.tasks, post_process=detector, budget=budget)
            )
        )
    finally:
        run_dir.unlock()
    return run_dir, activation_report(run_dir)
