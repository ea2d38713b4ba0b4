"""The body of ``knowmeter activation`` (kept apart so the command module stays import-light)."""

from __future__ import annotations

import signal
from pathlib import Path

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
from knowmeter.cli._options import ActivationOptions
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


def _print(report: ActivationReport, run_dir: RunDir, opts: ActivationOptions) -> None:
    written = write_ci_outputs(report, junit=opts.junit, markdown=opts.markdown)
    if opts.as_json:
        from knowmeter.cli._output import print_json

        print_json(report.model_dump(mode="json"))
        return
    for line in summary_lines(report):
        click.echo(line)
    click.echo(f"report: {run_dir.path / 'activation.json'}")
    click.echo(f"html: {run_dir.path / 'activation.html'}")
    for path in written:
        click.echo(f"wrote: {path}")


def _target(opts: ActivationOptions) -> Target:
    if not opts.skill:
        raise InputError("activation needs a SKILL (a SKILL.md or its folder), or --resume RUN")
    if opts.against and opts.description:
        raise InputError("give --against or --description, not both")
    return Target(
        skill=opts.skill,
        case_files=opts.case_files,
        against=opts.against,
        description=opts.description,
        skills_dirs=opts.skills_dirs,
        distractors=opts.distractors,
        counts=opts.counts,
        split=opts.split,
    )


def run(opts: ActivationOptions) -> int:
    """Run (or resume) an activation measurement; print it; return the exit code. After Ctrl-C
    or SIGTERM the finished tasks are reported and the line that resumes the run is printed."""
    output_dir = opts.output_dir or defaults.OUTPUT_DIR
    if opts.trends:
        for line in trend_lines(activation_store(output_dir) / "runs"):
            click.echo(line)
        return 0
    options = parse_option_flags(list(opts.executor_options))
    if opts.report_run:
        run_dir = find_run(activation_store(output_dir), opts.report_run)
        if run_dir.read_run().activation is None:
            raise InputError(f"run {run_dir.id} is not an activation run")
        report = activation_report(run_dir)
        _print(report, run_dir, opts)
        return report.exit_code
    try:
        if opts.resume:
            run_dir, report = resume_activation(
                opts.resume, output_dir=output_dir, executor_options=options, on_start=_started
            )
        else:
            run_dir, report = run_activation(
                _target(opts),
                base_dir=Path.cwd(),
                executor=opts.executor,
                executor_options=options,
                on_start=_started,
                model=opts.model,
                repeat=opts.repeat,
                concurrency=opts.concurrency,
                timeout_s=opts.timeout_s,
                retry=opts.retry,
                no_cache=opts.no_cache or None,
                budget_total_usd=opts.budget_usd,
                seed=opts.seed,
                output_dir=opts.output_dir,
            )
    except ActivationInterrupted as stop:
        _print(stop.report, stop.run_dir, opts)
        how = "" if stop.signum == signal.SIGINT else f" by {signal.Signals(stop.signum).name}"
        again = f"knowmeter activation --resume {stop.run_dir.id}"
        if opts.output_dir:
            again += f" --output-dir {opts.output_dir}"
        click.echo(f"interrupted{how}: the finished tasks are stored; continue with: {again}", err=True)
        return stopped_exit_code(stop)
    _print(report, run_dir, opts)
    return report.exit_code
