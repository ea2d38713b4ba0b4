"""The body of ``knowmeter activation`` (kept apart so the command module stays import-light)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import click

from knowmeter import defaults
from knowmeter.activation import (
    ActivationInterrupted,
    ActivationPlan,
    ActivationReport,
    Target,
    activation_report,
    activation_store,
    resume_activation,
    run_activation,
    summary_lines,
    trend_lines,
    write_ci_outputs,
)
from knowmeter.errors import InputError
from knowmeter.evaluation import parse_option_flags
from knowmeter.exit_codes import stopped_exit_code
from knowmeter.store import RunDir, find_run


def _started(plan: ActivationPlan, run_dir: RunDir, left: int) -> None:
    p = plan.prepared
    total = len(p.tasks)
    what = f"{left} of {total} tasks left" if left < total else f"{total} tasks"
    click.echo(
        f"run {run_dir.id}: {len(p.sample_set.samples)} case(s) × {len(p.variants)} version(s) × "
        f"{p.config.repeat} repeat(s) = {what} ({p.executor.name})",
        err=True,
    )


def _print(report: ActivationReport, run_dir: RunDir, opts: dict[str, Any]) -> None:
    written = write_ci_outputs(report, junit=opts.get("junit"), markdown=opts.get("markdown"))
    if opts.get("as_json"):
        from knowmeter.cli._output import print_json

        print_json(report.model_dump(mode="json"))
        return
    for line in summary_lines(report):
        click.echo(line)
    click.echo(f"report: {run_dir.path / 'activation.json'}")
    click.echo(f"html: {run_dir.path / 'activation.html'}")
    for path in written:
        click.echo(f"wrote: {path}")


def _target(opts: dict[str, Any]) -> Target:
    if not opts.get("skill"):
        raise InputError("activation needs a SKILL (a SKILL.md or its folder), or --resume RUN")
    if opts.get("against") and opts.get("description"):
        raise InputError("give --against or --description, not both")
    return Target(
        skill=opts["skill"],
        case_files=tuple(opts["case_files"]),
        against=opts.get("against"),
        description=opts.get("description"),
        skills_dirs=tuple(opts["skills_dirs"]),
        distractors=tuple(opts["distractors"]),
        counts=opts["counts"],
        split=bool(opts.get("split")),
    )


def run(opts: dict[str, Any]) -> int:
    """Run (or resume) an activation measurement; print it; return the exit code. After Ctrl-C
    or SIGTERM the finished tasks are reported and the line that resumes the run is printed."""
    output_dir = opts.get("output_dir") or defaults.OUTPUT_DIR
    if opts.get("trends"):
        for line in trend_lines(activation_store(output_dir) / "runs"):
            click.echo(line)
        return 0
    options = parse_option_flags(list(opts.get("executor_options") or ()))
    if opts.get("report_run"):
        run_dir = find_run(activation_store(output_dir), str(opts["report_run"]))
        if run_dir.read_run().activation is None:
            raise InputError(f"run {run_dir.id} is not an activation run")
        report = activation_report(run_dir)
        _print(report, run_dir, opts)
        return report.exit_code
    try:
        if opts.get("resume"):
            run_dir, report = resume_activation(
                str(opts["resume"]), output_dir=output_dir, executor_options=options, on_start=_started
            )
        else:
            run_dir, report = run_activation(
                _target(opts),
                base_dir=Path.cwd(),
                executor=opts["executor"],
                executor_options=options,
                on_start=_started,
                model=opts.get("model"),
                repeat=opts["repeat"],
                concurrency=opts.get("concurrency"),
                timeout_s=opts.get("timeout_s"),
                retry=opts.get("retry"),
                no_cache=opts.get("no_cache") or None,
                budget_total_usd=opts.get("budget_usd"),
                seed=opts.get("seed"),
                output_dir=opts.get("output_dir"),
            )
    except ActivationInterrupted as stop:
        _print(stop.report, stop.run_dir, opts)
        how = "" if stop.signum == signal.SIGINT else f" by {signal.Signals(stop.signum).name}"
        again = f"knowmeter activation --resume {stop.run_dir.id}"
        if opts.get("output_dir"):
            again += f" --output-dir {opts['output_dir']}"
        click.echo(f"interrupted{how}: the finished tasks are stored; continue with: {again}", err=True)
        return stopped_exit_code(stop)
    _print(report, run_dir, opts)
    return report.exit_code
