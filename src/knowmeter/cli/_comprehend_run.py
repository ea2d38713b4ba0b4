"""The body of ``knowmeter comprehend`` (kept apart so the command module stays import-light)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import click

from knowmeter.comprehension import (
    ComprehensionPlan,
    Target,
    exit_code,
    make_config,
    make_grader,
    prepare_comprehension,
    reprepare,
    start_comprehension,
    state_update,
    summary_lines,
    write_state,
)
from knowmeter.errors import InputError
from knowmeter.evaluation import Prepared, execute, resume_run, run_budget
from knowmeter.exit_codes import EXIT_INPUT
from knowmeter.pipeline import finalize
from knowmeter.store import RunDir, find_run


def _plan(opts: dict[str, Any]) -> tuple[ComprehensionPlan, RunDir, list[Any]]:
    if opts.get("resume"):
        from knowmeter.config import DEFAULT_OUTPUT_DIR

        run_dir = find_run(Path(opts.get("output_dir") or DEFAULT_OUTPUT_DIR), str(opts["resume"]))
        if "comprehension" not in run_dir.read_run():
            raise InputError(f"run {run_dir.id} is not a comprehension run; resume it with knowmeter eval --resume")
        plans: list[ComprehensionPlan] = []

        def again(record: dict[str, Any]) -> Prepared:
            plans.append(reprepare(record))
            return plans[-1].prepared

        _, tasks = resume_run(run_dir, again)
        click.echo(f"resuming run {run_dir.id}: {len(tasks)} of {len(plans[0].prepared.tasks)} tasks left", err=True)
        return plans[0], run_dir, tasks
    if not opts.get("skill"):
        raise InputError("comprehend needs a SKILL (a SKILL.md or its folder), or --resume RUN")
    target = Target(str(opts["skill"]), opts.get("evals"), int(opts["ngram"]), opts.get("cwd"))
    config = make_config(base_dir=Path.cwd(), target=target, executor=opts["executor"], model=opts.get("model"),
                         judges=list(opts["judges"]), repeat=opts["repeat"], judge_repeat=opts["judge_repeat"],
                         concurrency=opts.get("concurrency"), timeout_s=opts.get("timeout_s"),
                         retry=opts.get("retry"), no_cache=opts.get("no_cache") or None,
                         budget_total_usd=opts.get("budget_usd"), seed=opts.get("seed"),
                         output_dir=opts.get("output_dir"))
    plan = prepare_comprehension(config, target)
    run_dir = start_comprehension(plan)
    p = plan.prepared
    click.echo(f"run {run_dir.id}: {len(p.sample_set.samples)} cases × 2 arms × {p.config.repeat} repeat(s) = "
               f"{len(p.tasks)} tasks ({p.executor.name}); graders: {', '.join(j.name for j in p.judges)}", err=True)
    return plan, run_dir, p.tasks


def run_comprehend(opts: dict[str, Any]) -> int:
    """Run (or resume) a comprehension measurement; returns the exit code."""
    plan, run_dir, tasks = _plan(opts)
    prepared = plan.prepared
    budget = run_budget(prepared.config)
    stats, budget = anyio.run(lambda: execute(prepared, run_dir, tasks, post_process=make_grader(plan, budget),
                                              budget=budget))
    status = "complete" if not stats.not_started else "incomplete"
    if stats.not_started:
        click.echo(f"budget: {len(stats.not_started)} task(s) not started — the budget would have been exceeded",
                   err=True)
    report = finalize(run_dir, status=status, wall_s=stats.wall_s, budget=budget.to_dict())
    comp = report["comprehension"]
    if opts.get("as_json"):
        from knowmeter.cli._output import print_json

        print_json(report)
    else:
        for line in summary_lines(report):
            click.echo(line)
        click.echo(f"report: {run_dir.report_file}")
    graders_failed = [u for u in comp["ungraded"] if "unusable judge reply" in u]
    for u in graders_failed:
        click.echo(f"knowmeter: error: {run_dir.results_file}: {u}; the run is stored and the agent's answers are "
                   "cached: run the same command again to re-grade", err=True)
    if graders_failed:
        return EXIT_INPUT
    if opts.get("write_state"):
        _write_state(plan, run_dir, report)
    return exit_code(report)


def _write_state(plan: ComprehensionPlan, run_dir: RunDir, report: dict[str, Any]) -> None:
    skill = plan.inputs.skill
    path = skill.audit_state_path or skill.path.parent / "audit-state.json"
    ex = report["run"]["executor"]
    update = state_update(report["comprehension"]["verdict"], at=report["run"]["finished_at"],
                          runner=f"knowmeter comprehend ({ex['name']})", model=ex.get("model"),
                          receipt=run_dir.report_file)
    before = write_state(path, update)
    click.echo(f"audit-state: {path}: comprehension_verdict {before['comprehension_verdict']} → "
               f"{update['comprehension_verdict']}, eval_score {update['eval_score']}", err=True)
