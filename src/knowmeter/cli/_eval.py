"""``knowmeter eval``: run, grade, compare, decide."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded
from knowmeter.cli._output import NumberRange, budget_option, ci_output_options, executor_option_flags
from knowmeter.cluster import BACKENDS
from knowmeter.exit_codes import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED


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
@click.option(
    "--config", "config", type=click.Path(path_type=Path), help="eval.yaml (default: ./eval.yaml if present)."
)
@click.option("--samples", multiple=True, help="Sample file(s): eval-samples.json|yaml|yml|jsonl.")
@click.option("--control", help="Control variant: baseline, <name>, path/to/file.md, dir/SKILL.md, git:<ref>:<name>.")
@click.option("--treatment", "treatments", multiple=True, help="Treatment variant (repeatable).")
@click.option(
    "--executor",
    help="Registered executor (offline, script, claude, codex, openai, anthropic, "
    "claude-sdk) or any command speaking the script protocol.",
)
@click.option("--model", help="Model passed to the executor.")
@executor_option_flags
@click.option("--skill-dir", help=f"Where <name> variants are looked up (default: {defaults.SKILL_DIR}).")
@click.option("--concurrency", type=click.IntRange(1, 256), help=f"Tasks run at once (default {defaults.CONCURRENCY}).")
@click.option("--repeat", type=click.IntRange(1, 100), help="Real replicates per sample and variant.")
@click.option("--timeout", "timeout_s", type=NumberRange(min=0.001), help="Per-task timeout in seconds.")
@click.option("--retry", type=click.IntRange(0, 10), help="Retries on executor errors (exponential backoff).")
@click.option("--no-cache", is_flag=True, default=None, help="Do not read or write the response cache.")
@budget_option(
    "Total cost budget over every model call (agent, judges, classifier), over every leg of a resumed "
    "run; with --resume, the run's new total (what it spent so far counts against it)."
)
@click.option("--seed", type=click.IntRange(min=0), help="Seed for every statistical computation.")
@click.option("--output-dir", help=f"Where runs are stored (default: {defaults.OUTPUT_DIR}).")
@click.option("--judge", "judges", multiple=True, help="LLM judge as executor:model (repeatable for an ensemble).")
@click.option("--judge-repeat", type=click.IntRange(1, 20), help="Judge calls per task (mean, SD, failures).")
@click.option("--no-length-debias", is_flag=True, default=False, help="Drop the judge's length-debias instruction.")
@click.option(
    "--threshold",
    type=NumberRange(1, 5),
    help=f"Layer gate: each present layer's mean ≥ this (default {defaults.LAYER_GATE}).",
)
@click.option(
    "--max-mde",
    type=NumberRange(min=0, min_open=True),
    help="No significant change and a minimum detectable effect above this many points → "
    f"UNDERPOWERED, not NOISE (default {defaults.MAX_MDE}).",
)
@click.option(
    "--min-pairs",
    type=click.IntRange(min=2),
    help=f"Fewer paired samples → UNDERPOWERED, or CAUTIOUS for a win (default {defaults.MIN_PAIRS}).",
)
@click.option(
    "--stability-limit",
    type=NumberRange(0, 1, min_open=True),
    help="Note (never a rule of the verdict) when more than this share of the composite's variance "
    f"is run-to-run (default {defaults.STABILITY_LIMIT}).",
)
@click.option(
    "--bootstrap-samples",
    type=click.IntRange(min=100),
    help=f"Bootstrap resamples (default {defaults.BOOTSTRAP_SAMPLES}).",
)
@click.option("--max-gap-rate", type=NumberRange(0, 1), help="Fail (exit 1) when a variant's gap rate exceeds this.")
@click.option(
    "--gap-rate-regression",
    type=NumberRange(0, 1),
    help="Fail when the gap rate rose by more than this since the last run on the same sample set.",
)
@click.option(
    "--hedging-judge", help="executor:model for the hedging classifier (default: the first --judge, else regex only)."
)
@click.option(
    "--unsealed",
    is_flag=True,
    default=False,
    help="Run agent CLIs (claude, codex, claude-sdk) without sealing tasks from each other, where "
    "bubblewrap cannot run: every agent can then read the other arms' artifacts and the samples.",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Run only shard I of N of the plan (1-based; every task of a sample lands in the same shard), "
    "e.g. one per CI job; combine them with knowmeter merge. --budget-usd then applies to each shard; "
    "--resume continues a shard's run with its own shard.",
)
@click.option(
    "--sequential",
    is_flag=True,
    default=None,
    help="Run the samples in batches, in a seeded random order, and stop as soon as the verdict is "
    "clear: group-sequential looks every tenth of the samples from --min-pairs on, Haybittle–Peto "
    "boundaries (interim p < 0.001, the last look at alpha: the fixed run's verdict if it runs to the end).",
)
@click.option(
    "--sequential-design",
    type=click.Choice(defaults.SEQUENTIAL_DESIGNS),
    help="The sequential design (implies --sequential): haybittle-peto (default) or obf "
    "(O'Brien–Fleming-type alpha spending, looks every fifth of the samples: exactly alpha, "
    "a little less power at the planned N).",
)
@click.option(
    "--futility",
    is_flag=True,
    default=None,
    help="Let a sequential look also stop when even a change of max_mde could no longer be shown by "
    "the planned samples (implies --sequential; saves tasks on a null change, costs some power).",
)
@click.option(
    "--control-run",
    metavar="RUN",
    help="Take the control arm's results from stored run RUN instead of running it again; refused, "
    "naming the fields, unless its samples, control artifact, executor and version, model and "
    "answer-changing settings are the same.",
)
@click.option("--resume", "resume", help="Continue a killed, interrupted or stopped run: run only its missing tasks.")
@click.option(
    "--max-errors",
    type=click.IntRange(min=0),
    help="Stop starting tasks when the first N finished tasks all failed the same way (one error "
    "class: the error's first line without its ids, numbers, quoted strings and paths) — a missing key, "
    "an unknown model, an agent CLI not installed; what finished is kept and --resume RUN finishes the "
    f"run. One success disarms it; 0 never stops (default {defaults.MAX_ERRORS}).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help="Debugging: run only the first N samples (after --sample). The report and the sample-set "
    "watermark mark the run as a subset, so it is never compared or trended as a full run.",
)
@click.option(
    "--sample",
    "sample_ids",
    multiple=True,
    metavar="ID",
    help="Debugging: run only this sample (repeatable); a subset run, as --limit.",
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
    terminated (SIGTERM — a CI cancel, timeout, docker stop — handled as Ctrl-C is). With
    --report-only 0 unless interrupted, terminated, bad input or a crash.
    """
    from knowmeter.cli._run import run_eval

    code = run_eval(opts)
    sys.exit(EXIT_OK if opts.get("report_only") and code not in (EXIT_INTERRUPTED, EXIT_TERMINATED) else code)
