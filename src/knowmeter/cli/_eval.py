"""``knowmeter eval``: run, grade, compare, decide."""

from __future__ import annotations

import gc
import sys

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded
from knowmeter.cli._output import ci_output_options
from knowmeter.cli._settings import setting_options
from knowmeter.cluster import BACKENDS
from knowmeter.settings import EVAL


class _EvalCommand(click.Command):
    """``eval`` takes its files as options: a file given as an argument gets the option to use."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if "unexpected extra argument" not in exc.message:
                raise
            raise click.UsageError(
                f"{exc.message}: eval takes no file argument — pass eval.yaml with --config FILE "
                "and a sample file with --samples FILE",
                ctx,
            ) from None


@click.command("eval", cls=_EvalCommand)
@setting_options(
    EVAL,
    before={
        "max_errors": [
            click.option(
                "--resume", "resume", help="Continue a killed, interrupted or stopped run: run only its missing tasks."
            )
        ]
    },
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default=defaults.BACKEND,
    show_default=True,
    help="Where the agent runs: here, or each task as a Ray task (pip install 'knowmeter[ray]'); this "
    "process stays the only writer of the results and keeps the cache, budget, concurrency and timeouts.",
)
@click.option(
    "--ray-address",
    metavar="ADDR",
    help="Ray cluster to run on (HOST:PORT or ray://HOST:PORT; default "
    "RAY_ADDRESS, else a local Ray instance on 127.0.0.1).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (tasks by variant and repeat, agent, judges), its estimated cost and wall time "
    "with a range (from stored runs of the same agent, model, judges and sample set; else the prompts' "
    "size at list price for a model API; else unknown), and the minimum detectable effect at the "
    "planned samples with the samples --max-mde needs; run, spend and store nothing. With --json: the plan as JSON.",
)
@click.option("--json", "as_json", is_flag=True, help="Print report.json to stdout instead of the summary.")
@ci_output_options
@click.option("--quiet", "-q", is_flag=True, help="Print only the outcome line (no progress, no summary).")
@click.option("--report-only", is_flag=True, help="Always exit 0 (report, do not gate).")
@guarded
def eval_cmd(**opts: object) -> None:
    """Run every sample under every variant, grade, compare and print the verdict.

    The first line is the run's outcome: the verdict, or what stops the run from passing (NOT
    MEASURED when most tasks errored, INCOMPLETE, JUDGE FAILED, GATE FAILED); the summary's last
    line is the recommendation for that outcome, followed by the paths of report.json and
    report.html. Gap-rate gates apply to the treatments (to the only variant of a run without a
    control), never to the control.

    Exit codes: 0 PROGRESS (or a passing SOLO) with every task run and every gate passed; 1 any
    other outcome; 2 bad input; 3 internal error (a bug: one line naming a log with the traceback);
    130 interrupted (Ctrl-C: the finished tasks are kept, resume with --resume RUN); 143
    terminated (SIGTERM — a CI cancel, timeout, docker stop — handled as Ctrl-C is); 129 hung up
    (SIGHUP: the terminal or SSH session closed, handled as Ctrl-C is). With
    --report-only 0 unless interrupted, terminated, bad input or a crash.
    """
    # Start-up (imports, config, samples, plan) allocates much and frees little: the cyclic GC is
    # paused until the run starts, where ``_Terminal.started`` freezes what it made and resumes it
    # (and resumed here whatever happened: bad input stops a run before it starts).
    gc.disable()
    try:
        from knowmeter.cli._options import EvalOptions
        from knowmeter.cli._run import run_eval

        code = run_eval(EvalOptions.of(opts))
    finally:
        gc.enable()
    sys.exit(code)
