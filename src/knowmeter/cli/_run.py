"""The body of ``knowmeter eval`` (kept apart so the command module stays import-light)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from knowmeter.api import Listener, RunInterrupted, evaluate, resume
from knowmeter.cli._options import EvalOptions
from knowmeter.cli._output import console as make_console
from knowmeter.cli._output import interrupted_line
from knowmeter.cli._progress import Progress
from knowmeter.evaluation import Prepared, resolve_config
from knowmeter.executors import use_pidfd_child_watcher
from knowmeter.printable import printable
from knowmeter.runner import Budget
from knowmeter.store import RunDir, TaskRecord

if TYPE_CHECKING:  # the report stack (pydantic models, numpy) is imported once the tasks ran
    from rich.console import Console

    from knowmeter.report import Report


class _Terminal(Listener):
    """Prints the run's plan and notes to stderr and draws its progress."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.err: Console | None = None  # made for the first line printed: --quiet never imports rich
        self.progress: Progress | None = None
        self.run_dir: RunDir | None = None

    def stored(self) -> RunDir:
        """The run's folder (known once the run started)."""
        assert self.run_dir is not None
        return self.run_dir

    def started(self, prepared: Prepared, run_dir: RunDir, tasks: int, *, resumed: bool) -> None:
        self.run_dir = run_dir
        if resumed:
            self.say(f"resuming run {run_dir.id}: {tasks} of {len(prepared.tasks)} tasks left")
        else:
            self.say(
                f"run {run_dir.id}: {len(prepared.sample_set.samples)} samples × "
                f"{len(prepared.variants)} variants × {prepared.config.repeat} repeat(s) = "
                f"{prepared.plan_tasks} tasks ({prepared.executor.name})"
            )
            if prepared.shard is not None:
                self.say(
                    f"shard {prepared.shard}: {tasks} of the {prepared.plan_tasks} tasks "
                    "(combine the shards with knowmeter merge)"
                )
        self.progress = Progress(
            tasks, prepared.config.concurrency, None if self.quiet else sys.stderr, tty=sys.stderr.isatty()
        )
        gc.freeze()  # modules, config, samples and the plan live to the end: the cyclic GC need not rescan them
        gc.enable()  # paused through start-up (eval_cmd)

    def say(self, line: str, *, soft_wrap: bool = False) -> None:
        """One line to stderr, wrapped to its width (nothing with --quiet)."""
        if self.quiet:
            return
        if self.err is None:
            self.err = make_console(stderr=True)
        self.err.print(line, soft_wrap=soft_wrap)

    def note(self, line: str) -> None:
        self.say(printable(line))

    def executing(self, budget: Budget) -> None:
        if self.progress is not None:
            self.progress.one_at_a_time = lambda: budget.one_at_a_time_now

    def record(self, record: TaskRecord) -> None:
        if self.progress is not None:
            self.progress.tick(record)

    def executed(self) -> None:
        if self.progress is not None:
            self.progress.close()


def run_eval(opts: EvalOptions) -> int:
    """Run (or resume) an evaluation; returns its exit code (``knowmeter.decision.command_exit_code``:
    the run's decision's, 0 with ``--report-only``, or ``EXIT_INTERRUPTED`` after Ctrl-C and
    ``EXIT_TERMINATED`` after SIGTERM — the finished tasks are kept and reported)."""
    if opts.dry_run:
        gc.enable()  # no run starts: the pause of start-up (eval_cmd) ends here
        return _dry_run(opts)
    settings = opts.settings
    terminal = _Terminal(opts.quiet)
    use_pidfd_child_watcher()
    try:
        if opts.resume:
            report = resume(
                opts.resume,
                output_dir=settings.output_dir,
                listener=terminal,
                backend=opts.backend,
                ray_address=opts.ray_address,
                budget_usd=settings.budget_usd,
                max_errors=settings.max_errors,
            )
        else:
            resolved = resolve_config(settings, Path.cwd())
            report = evaluate(resolved, listener=terminal, backend=opts.backend, ray_address=opts.ray_address)
    except RunInterrupted as stop:
        from knowmeter.decision import command_exit_code  # the report stack: loaded once the tasks ran

        report, run_dir = stop.report, terminal.stored()
        written = _write_files(report, run_dir, opts)
        print_report(report, run_dir.report_file, written, quiet=opts.quiet, as_json=opts.as_json)
        terminal.quiet = False  # even --quiet says how to continue
        terminal.say(interrupted_line(stop, settings.output_dir), soft_wrap=True)
        return command_exit_code(report.decision, stop=stop)
    from knowmeter.decision import command_exit_code

    run_dir = terminal.stored()
    written = _write_files(report, run_dir, opts)
    gc.freeze()  # the records stay alive to the exit: spare the interpreter's last full collection
    print_report(report, run_dir.report_file, written, quiet=opts.quiet, as_json=opts.as_json)
    return command_exit_code(report.decision, report_only=opts.report_only)


def _dry_run(opts: EvalOptions) -> int:
    """``eval --dry-run``: print the plan and its estimates; nothing runs."""
    from knowmeter.api import dry_run
    from knowmeter.errors import InputError

    if opts.resume:
        raise InputError("--dry-run plans a new run; to see what a stored run still needs, use knowmeter runs")
    plan = dry_run(resolve_config(opts.settings, Path.cwd()))
    if opts.as_json:
        from knowmeter.cli._output import print_json

        print_json(plan.to_dict())
    else:
        for line in plan.lines():
            click.echo(printable(line))
    return 0


def _write_files(report: Report, run_dir: RunDir, opts: EvalOptions) -> list[tuple[str, Path]]:
    """report.html beside report.json, and the --junit / --markdown / --csv files when asked for."""
    from knowmeter.report import write_outputs

    return write_outputs(
        report, html=run_dir.path / "report.html", junit=opts.junit, markdown=opts.markdown, csv=opts.csv
    )


def print_report(
    report: Report, report_file: Path, written: list[tuple[str, Path]], *, quiet: bool, as_json: bool
) -> None:
    """The outcome line (``quiet``), report.json (``as_json``) or the summary with the files written."""
    if quiet and not as_json:
        click.echo(printable(report.decision.headline if report.decision else "no decision"))
    elif as_json:
        from knowmeter.cli._output import print_json

        print_json(report.to_dict())
    else:
        from knowmeter.report import render_terminal

        render_terminal(report, make_console())
        click.echo(f"report: {printable(report_file)}")
        for what, path in written:
            click.echo(f"{what}: {printable(path)}")
