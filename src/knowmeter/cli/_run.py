"""The body of ``knowmeter eval`` (kept apart so the command module stays import-light)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import anyio
import click

from knowmeter.cli._output import console as make_console
from knowmeter.cli._progress import Progress
from knowmeter.evaluation import (
    Overrides,
    Prepared,
    execute,
    executor_sealed,
    prepare,
    resolve_config,
    resume_run,
    run_budget,
    start_run,
)
from knowmeter.executors._spawn import use_pidfd_child_watcher
from knowmeter.exit_codes import EXIT_INTERRUPTED
from knowmeter.pipeline import finalize, make_post_process
from knowmeter.printable import printable
from knowmeter.report._terminal import render_terminal
from knowmeter.runner import open_backend
from knowmeter.store import RunDir, find_run


def _overrides(opts: dict[str, Any]) -> Overrides:
    return Overrides(
        config=opts.get("config"),
        samples=list(opts["samples"]) or None,
        control=opts.get("control"),
        treatments=list(opts["treatments"]) or None,
        executor=opts.get("executor"),
        model=opts.get("model"),
        skill_dir=opts.get("skill_dir"),
        concurrency=opts.get("concurrency"),
        repeat=opts.get("repeat"),
        timeout_s=opts.get("timeout_s"),
        retry=opts.get("retry"),
        no_cache=True if opts.get("no_cache") else None,
        budget_usd=opts.get("budget_usd"),
        seed=opts.get("seed"),
        output_dir=opts.get("output_dir"),
        judges=list(opts["judges"]) or None,
        judge_repeat=opts.get("judge_repeat"),
        length_debias=False if opts.get("no_length_debias") else None,
        max_gap_rate=opts.get("max_gap_rate"),
        gap_rate_regression=opts.get("gap_rate_regression"),
        threshold=opts.get("threshold"),
        max_mde=opts.get("max_mde"),
        min_pairs=opts.get("min_pairs"),
        stability_limit=opts.get("stability_limit"),
        bootstrap_samples=opts.get("bootstrap_samples"),
        hedging_judge=opts.get("hedging_judge"),
        unsealed=True if opts.get("unsealed") else None,
        executor_options=list(opts.get("executor_options") or ()) or None,
        shard=opts.get("shard"),
    )


def run_eval(opts: dict[str, Any]) -> int:
    """Run (or resume) an evaluation; returns the exit code of the run's decision, or
    ``EXIT_INTERRUPTED`` after Ctrl-C (the finished tasks are kept and reported)."""
    err = make_console(stderr=True)
    err.quiet = bool(opts.get("quiet"))
    if opts.get("resume"):
        ov = _overrides(opts)
        from knowmeter.config import DEFAULT_OUTPUT_DIR

        output_dir = Path(ov.output_dir or DEFAULT_OUTPUT_DIR)
        run_dir = find_run(output_dir, str(opts["resume"]))
        run_dir.lock()  # two resumes of one run would run its missing tasks twice
        prepared, tasks = resume_run(run_dir)
        err.print(f"resuming run {run_dir.id}: {len(tasks)} of {len(prepared.tasks)} tasks left")
    else:
        config = resolve_config(_overrides(opts), Path.cwd())
        prepared = prepare(config)
        run_dir = start_run(prepared)
        run_dir.lock()
        tasks = prepared.tasks
        err.print(f"run {run_dir.id}: {len(prepared.sample_set.samples)} samples × {len(prepared.variants)} "
                  f"variants × {prepared.config.repeat} repeat(s) = {prepared.plan_tasks} tasks "
                  f"({prepared.executor.name})")
        if prepared.shard is not None:
            err.print(f"shard {prepared.shard}: {len(tasks)} of the {prepared.plan_tasks} tasks "
                      "(combine the shards with knowmeter merge)")
    for note in start_notes(prepared):
        err.print(printable(note))

    if executor_sealed(prepared.executor) is False:
        err.print(f"UNSEALED: {prepared.executor.name} tasks are not sealed from each other; an agent can read "
                  "the other arm's artifact, the samples and the run store, and files it writes outside its "
                  "folder stay (--unsealed)")
    backend = open_backend(str(opts.get("backend") or "local"), opts.get("ray_address"))
    progress = Progress(len(tasks), prepared.config.concurrency, None if err.quiet else sys.stderr,
                        tty=sys.stderr.isatty())
    use_pidfd_child_watcher()
    gc.freeze()  # modules, config, samples and the plan live to the end: the cyclic GC need not rescan them
    budget = run_budget(prepared.config)
    try:
        stats, budget = anyio.run(
            lambda: execute(prepared, run_dir, tasks, post_process=make_post_process(prepared, budget),
                            on_record=progress.tick, budget=budget, backend=backend)
        )
    except KeyboardInterrupt:
        progress.close()
        report = finalize(run_dir, status="interrupted", budget=budget.to_dict())
        _print(report, run_dir.report_file, _write_files(report, run_dir, opts), opts)
        resume = f"knowmeter eval --resume {run_dir.id}"
        if opts.get("output_dir"):
            resume += f" --output-dir {opts['output_dir']}"
        err.quiet = False  # even --quiet says how to continue
        err.print(f"interrupted: {report['run']['tasks_done']}/{report['run']['tasks_total']} tasks are stored; "
                  f"continue with: {resume}", soft_wrap=True)
        return EXIT_INTERRUPTED
    progress.close()
    status = "complete" if not stats.not_started else "incomplete"
    if stats.not_started:
        err.print(f"budget: {len(stats.not_started)} task(s) not started — the budget would have been exceeded")
    report = finalize(run_dir, status=status, wall_s=stats.wall_s, budget=budget.to_dict())
    written = _write_files(report, run_dir, opts)
    gc.freeze()  # the records stay alive to the exit: spare the interpreter's last full collection
    _print(report, run_dir.report_file, written, opts)
    return int(report["exit_code"])


def start_notes(prepared: Prepared) -> list[str]:
    """What the user should know before the tasks run: the offline demo agent is not a model; a
    script agent's workspace exposes the answer key or another arm's artifact."""
    if prepared.executor.name == "offline":
        return ["executor offline: the built-in non-LLM demo agent (no model is called); choose an agent with "
                "--executor or executor: in eval.yaml"]
    if prepared.workspace_leak:
        return [f"⚠ {prepared.workspace_leak}: a script agent that reads files can see it (agent CLIs are refused "
                "this workspace); give the variants a cwd that holds only the knowledge base"]
    return []


def _write_files(report: dict[str, Any], run_dir: RunDir, opts: dict[str, Any]) -> list[tuple[str, Path]]:
    """report.html beside report.json, and the --junit / --markdown files when asked for."""
    from knowmeter.report._outputs import write_outputs

    return write_outputs(report, html=run_dir.path / "report.html", junit=opts.get("junit"),
                         markdown=opts.get("markdown"))


def _print(report: dict[str, Any], report_file: Path, written: list[tuple[str, Path]], opts: dict[str, Any]) -> None:
    if opts.get("quiet") and not opts.get("as_json"):
        click.echo(printable(report["decision"]["headline"]))
    elif opts.get("as_json"):
        from knowmeter.cli._output import print_json

        print_json(report)
    else:
        render_terminal(report, make_console())
        click.echo(f"report: {printable(report_file)}")
        for what, path in written:
            click.echo(f"{what}: {printable(path)}")

