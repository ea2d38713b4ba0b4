"""The body of ``knowmeter eval`` (kept apart so the command module stays import-light)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from knowmeter import defaults
from knowmeter.api import Listener, evaluate, resume
from knowmeter.cli._output import console as make_console
from knowmeter.cli._output import interrupted_line
from knowmeter.cli._progress import Progress
from knowmeter.errors import RunInterrupted
from knowmeter.evaluation import Overrides, Prepared
from knowmeter.executors import use_pidfd_child_watcher
from knowmeter.exit_codes import EXIT_NOT_PASSED, stopped_exit_code
from knowmeter.printable import printable
from knowmeter.report import Report, render_terminal
from knowmeter.runner import Budget
from knowmeter.store import RunDir


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
        sequential=True if opts.get("sequential") else None,
        sequential_design=opts.get("sequential_design"),
        futility=True if opts.get("futility") else None,
        control_run=opts.get("control_run"),
        max_errors=opts.get("max_errors"),
        limit=opts.get("limit"),
        sample_ids=list(opts.get("sample_ids") or ()) or None,
    )


class _Terminal(Listener):
    """Prints the run's plan and notes to stderr and draws its progress."""

    def __init__(self, err: Console, quiet: bool) -> None:
        self.err = err
        self.quiet = quiet
        self.progress: Progress | None = None
        self.run_dir: RunDir | None = None

    def stored(self) -> RunDir:
        """The run's folder (known once the run started)."""
        assert self.run_dir is not None
        return self.run_dir

    def started(self, prepared: Prepared, run_dir: RunDir, tasks: int, *, resumed: bool) -> None:
        self.run_dir = run_dir
        if resumed:
            self.err.print(f"resuming run {run_dir.id}: {tasks} of {len(prepared.tasks)} tasks left")
        else:
            self.err.print(
                f"run {run_dir.id}: {len(prepared.sample_set.samples)} samples × "
                f"{len(prepared.variants)} variants × {prepared.config.repeat} repeat(s) = "
                f"{prepared.plan_tasks} tasks ({prepared.executor.name})"
            )
            if prepared.shard is not None:
                self.err.print(
                    f"shard {prepared.shard}: {tasks} of the {prepared.plan_tasks} tasks "
                    "(combine the shards with knowmeter merge)"
                )
        self.progress = Progress(
            tasks, prepared.config.concurrency, None if self.quiet else sys.stderr, tty=sys.stderr.isatty()
        )
        gc.freeze()  # modules, config, samples and the plan live to the end: the cyclic GC need not rescan them

    def note(self, line: str) -> None:
        self.err.print(printable(line))

    def executing(self, budget: Budget) -> None:
        if self.progress is not None:
            self.progress.one_at_a_time = lambda: budget.one_at_a_time_now

    def record(self, record: dict[str, Any]) -> None:
        if self.progress is not None:
            self.progress.tick(record)

    def executed(self) -> None:
        if self.progress is not None:
            self.progress.close()


def run_eval(opts: dict[str, Any]) -> int:
    """Run (or resume) an evaluation; returns the exit code of the run's decision, or
    ``EXIT_INTERRUPTED`` after Ctrl-C and ``EXIT_TERMINATED`` after SIGTERM (the finished tasks
    are kept and reported)."""
    if opts.get("dry_run"):
        return _dry_run(opts)
    err = make_console(stderr=True)
    err.quiet = bool(opts.get("quiet"))
    terminal = _Terminal(err, err.quiet)
    use_pidfd_child_watcher()
    backend, ray_address = str(opts.get("backend") or defaults.BACKEND), opts.get("ray_address")
    try:
        if opts.get("resume"):
            report = resume(
                str(opts["resume"]),
                output_dir=opts.get("output_dir"),
                listener=terminal,
                backend=backend,
                ray_address=ray_address,
                budget_usd=opts.get("budget_usd"),
                max_errors=opts.get("max_errors"),
            )
        else:
            overrides = vars(_overrides(opts))
            report = evaluate(
                overrides.pop("config"), listener=terminal, backend=backend, ray_address=ray_address, **overrides
            )
    except RunInterrupted as stop:
        report, run_dir = stop.report, terminal.stored()
        print_report(report, run_dir.report_file, _write_files(report, run_dir, opts), opts)
        err.quiet = False  # even --quiet says how to continue
        err.print(interrupted_line(stop, opts.get("output_dir")), soft_wrap=True)
        return stopped_exit_code(stop)
    run_dir = terminal.stored()
    written = _write_files(report, run_dir, opts)
    gc.freeze()  # the records stay alive to the exit: spare the interpreter's last full collection
    print_report(report, run_dir.report_file, written, opts)
    return report.decision.exit_code if report.decision else EXIT_NOT_PASSED


def _dry_run(opts: dict[str, Any]) -> int:
    """``eval --dry-run``: print the plan and its estimates; nothing runs."""
    from knowmeter.api import dry_run
    from knowmeter.errors import InputError

    if opts.get("resume"):
        raise InputError("--dry-run plans a new run; to see what a stored run still needs, use knowmeter runs")
    overrides = vars(_overrides(opts))
    config = overrides.pop("config")
    plan = dry_run(*([config] if config is not None else []), **overrides)
    if opts.get("as_json"):
        from knowmeter.cli._output import print_json

        print_json(plan.to_dict())
    else:
        for line in plan.lines():
            click.echo(printable(line))
    return 0


def _write_files(report: Report, run_dir: RunDir, opts: dict[str, Any]) -> list[tuple[str, Path]]:
    """report.html beside report.json, and the --junit / --markdown / --csv files when asked for."""
    from knowmeter.report import write_outputs

    return write_outputs(
        report,
        html=run_dir.path / "report.html",
        junit=opts.get("junit"),
        markdown=opts.get("markdown"),
        csv=opts.get("csv"),
    )


def print_report(report: Report, report_file: Path, written: list[tuple[str, Path]], opts: dict[str, Any]) -> None:
    """The outcome line (``quiet``), report.json (``as_json``) or the summary with the files written."""
    if opts.get("quiet") and not opts.get("as_json"):
        click.echo(printable(report.decision.headline if report.decision else "no decision"))
    elif opts.get("as_json"):
        from knowmeter.cli._output import print_json

        print_json(report.to_dict())
    else:
        render_terminal(report, make_console())
        click.echo(f"report: {printable(report_file)}")
        for what, path in written:
            click.echo(f"{what}: {printable(path)}")
