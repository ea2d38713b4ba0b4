"""The settings a command line gives a run: one definition of each — its ``Overrides`` field, its
flag, help and bounds, and the commands that take it.

``eval``, ``report`` and ``comprehend`` build their options from these fields
(``knowmeter.cli._settings``), and a command's parsed options become an ``Overrides`` by field
name (``given``; ``knowmeter.cli._options``): adding a setting is adding a field here and reading it
where the run configuration is resolved (``evaluation.resolve_config``; a test sets each field
and checks the resolved ``RunConfig`` changes). The bounds are the ones ``RunConfig`` checks
(``bounds``). Import-light: ``--help`` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from knowmeter import defaults

Kind = Literal["int", "float", "str", "path", "switch"]

EVAL, REPORT, COMPREHEND = "eval", "report", "comprehend"


@dataclass(frozen=True)
class Flag:
    """How a setting is given on the command line. ``low`` / ``high`` bound a number (open
    bounds excluded); a ``switch`` gives ``switch_value`` when present, None when absent;
    ``commands`` take it, with the help of ``help_for[command]`` where its meaning there is
    worded for that command."""

    decls: tuple[str, ...]
    help: str
    kind: Kind = "str"
    commands: tuple[str, ...] = (EVAL,)
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    multiple: bool = False
    switch_value: bool = True
    metavar: str | None = None
    #: the values a ``str`` setting may take (None: any)
    choices: tuple[str, ...] | None = None
    help_for: Mapping[str, str] = field(default_factory=dict)

    def help_in(self, command: str) -> str:
        return self.help_for.get(command, self.help)


def _cli(*decls: str, help: str, **kw: Any) -> dict[str, Flag]:
    """The metadata of an ``Overrides`` field: its ``Flag``."""
    return {"flag": Flag(decls, help, **kw)}


#: how a ``--budget-usd`` binds, the same for every command
BUDGET_BINDS = (
    " A call starts only if it fits what is left; its cost is known only after it ran, so one can exceed "
    "the total: the output says so, and when calls report no cost (the budget cannot bind)."
)


@dataclass
class Overrides:
    """Command-line values; None means "not given" (the file or the default applies)."""

    config: Path | None = field(
        default=None, metadata=_cli("--config", help="eval.yaml (default: ./eval.yaml if present).", kind="path")
    )
    samples: list[str] | None = field(
        default=None,
        metadata=_cli("--samples", help="Sample file(s): eval-samples.json|yaml|yml|jsonl.", multiple=True),
    )
    control: str | None = field(
        default=None,
        metadata=_cli(
            "--control", help="Control variant: baseline, <name>, path/to/file.md, dir/SKILL.md, git:<ref>:<name>."
        ),
    )
    treatments: list[str] | None = field(
        default=None, metadata=_cli("--treatment", help="Treatment variant (repeatable).", multiple=True)
    )
    executor: str | None = field(
        default=None,
        metadata=_cli(
            "--executor",
            help="Registered executor (offline, script, claude, codex, openai, anthropic, "
            "claude-sdk; echo: a harness check that answers each prompt with itself, never a model) "
            "or any command speaking the script protocol.",
        ),
    )
    model: str | None = field(
        default=None,
        metadata=_cli(
            "--model",
            help="Model passed to the executor.",
            commands=(EVAL, COMPREHEND),
            help_for={COMPREHEND: "Model passed to the agent's executor."},
        ),
    )
    #: ``KEY=VALUE`` executor options (the value read as a YAML scalar), over eval.yaml's
    executor_options: list[str] | None = field(
        default=None,
        metadata=_cli(
            "-O",
            "--executor-option",
            help="Executor option (repeatable; eval.yaml executor.options.KEY), e.g. point an agent at a model "
            "server: claude: -O base_url=http://127.0.0.1:8080 (no /v1; the CLI adds /v1/messages); codex, "
            "openai: -O base_url=http://127.0.0.1:8080/v1 (with /v1); anthropic: no /v1. -O bin=PATH picks "
            "the CLI; -O api_key=... (better: the provider's variable, ANTHROPIC_API_KEY / OPENAI_API_KEY, "
            "which is passed through).",
            multiple=True,
            metavar="KEY=VALUE",
            commands=(EVAL, COMPREHEND),
        ),
    )
    skill_dir: str | None = field(
        default=None,
        metadata=_cli("--skill-dir", help=f"Where <name> variants are looked up (default: {defaults.SKILL_DIR})."),
    )
    concurrency: int | None = field(
        default=None,
        metadata=_cli(
            "--concurrency",
            help=f"Tasks run at once (default {defaults.CONCURRENCY}).",
            kind="int",
            low=1,
            high=256,
            commands=(EVAL, COMPREHEND),
        ),
    )
    repeat: int | None = field(
        default=None,
        metadata=_cli("--repeat", help="Real replicates per sample and variant.", kind="int", low=1, high=100),
    )
    timeout_s: float | None = field(
        default=None,
        metadata=_cli(
            "--timeout",
            help="Per-task timeout in seconds.",
            kind="float",
            low=0.001,
            commands=(EVAL, COMPREHEND),
        ),
    )
    retry: int | None = field(
        default=None,
        metadata=_cli(
            "--retry",
            help="Retries on executor errors (exponential backoff).",
            kind="int",
            low=0,
            high=10,
            commands=(EVAL, COMPREHEND),
            help_for={COMPREHEND: "Retries on executor errors."},
        ),
    )
    no_cache: bool | None = field(
        default=None,
        metadata=_cli(
            "--no-cache",
            help="Do not read or write the response cache.",
            kind="switch",
            commands=(EVAL, COMPREHEND),
        ),
    )
    budget_usd: float | None = field(
        default=None,
        metadata=_cli(
            "--budget-usd",
            help="Total cost budget over every model call (agent, judges, classifier), over every leg of a resumed "
            "run; with --resume, the run's new total (what it spent so far counts against it)." + BUDGET_BINDS,
            kind="float",
            low=0,
            commands=(EVAL, COMPREHEND),
            help_for={
                COMPREHEND: "Total cost budget over every model call (agent, graders), over every leg of a resumed "
                "run; with --resume, the run's new total." + BUDGET_BINDS
            },
        ),
    )
    seed: int | None = field(
        default=None,
        metadata=_cli(
            "--seed",
            help="Seed for every statistical computation.",
            kind="int",
            low=0,
            commands=(EVAL, REPORT, COMPREHEND),
            help_for={REPORT: "Seed override for the statistics.", COMPREHEND: "Seed of the statistics."},
        ),
    )
    output_dir: str | None = field(
        default=None,
        metadata=_cli(
            "--output-dir",
            help=f"Where runs are stored (default: {defaults.OUTPUT_DIR}).",
            commands=(EVAL, COMPREHEND),
        ),
    )
    judges: list[str] | None = field(
        default=None,
        metadata=_cli("--judge", help="LLM judge as executor:model (repeatable for an ensemble).", multiple=True),
    )
    judge_repeat: int | None = field(
        default=None,
        metadata=_cli("--judge-repeat", help="Judge calls per task (mean, SD, failures).", kind="int", low=1, high=20),
    )
    length_debias: bool | None = field(
        default=None,
        metadata=_cli(
            "--no-length-debias", help="Drop the judge's length-debias instruction.", kind="switch", switch_value=False
        ),
    )
    threshold: float | None = field(
        default=None,
        metadata=_cli(
            "--threshold",
            help=f"Layer gate: each present layer's mean ≥ this (default {defaults.LAYER_GATE}).",
            kind="float",
            low=1,
            high=5,
            commands=(EVAL, REPORT),
            help_for={REPORT: "Layer gate override."},
        ),
    )
    max_mde: float | None = field(
        default=None,
        metadata=_cli(
            "--max-mde",
            help="No significant change and a minimum detectable effect above this many points → "
            f"UNDERPOWERED, not NOISE (default {defaults.MAX_MDE}).",
            kind="float",
            low=0,
            low_open=True,
            commands=(EVAL, REPORT),
            help_for={REPORT: "Minimum detectable effect above which a null result is UNDERPOWERED (override)."},
        ),
    )
    min_pairs: int | None = field(
        default=None,
        metadata=_cli(
            "--min-pairs",
            help=f"Fewer paired samples → UNDERPOWERED, or CAUTIOUS for a win (default {defaults.MIN_PAIRS}).",
            kind="int",
            low=2,
            commands=(EVAL, REPORT),
            help_for={REPORT: "Paired samples needed to be powered (override)."},
        ),
    )
    stability_limit: float | None = field(
        default=None,
        metadata=_cli(
            "--stability-limit",
            help="Note (never a rule of the verdict) when more than this share of the composite's variance "
            f"is run-to-run (default {defaults.STABILITY_LIMIT}).",
            kind="float",
            low=0,
            high=1,
            low_open=True,
            commands=(EVAL, REPORT),
            help_for={REPORT: "Run-to-run variance share that triggers the stability note (override)."},
        ),
    )
    bootstrap_samples: int | None = field(
        default=None,
        metadata=_cli(
            "--bootstrap-samples",
            help=f"Bootstrap resamples (default {defaults.BOOTSTRAP_SAMPLES}).",
            kind="int",
            low=100,
            commands=(EVAL, REPORT),
            help_for={REPORT: "Bootstrap resamples override."},
        ),
    )
    max_gap_rate: float | None = field(
        default=None,
        metadata=_cli(
            "--max-gap-rate", help="Fail (exit 1) when a variant's gap rate exceeds this.", kind="float", low=0, high=1
        ),
    )
    gap_rate_regression: float | None = field(
        default=None,
        metadata=_cli(
            "--gap-rate-regression",
            help="Fail when the gap rate rose by more than this since the last run on the same sample set.",
            kind="float",
            low=0,
            high=1,
        ),
    )
    hedging_judge: str | None = field(
        default=None,
        metadata=_cli(
            "--hedging-judge",
            help="executor:model for the hedging classifier (default: the first --judge, else regex only).",
        ),
    )
    unsealed: bool | None = field(
        default=None,
        metadata=_cli(
            "--unsealed",
            help="Run agent CLIs (claude, codex, claude-sdk) without sealing tasks from each other, where "
            "bubblewrap cannot run: every agent can then read the other arms' artifacts and the samples.",
            kind="switch",
        ),
    )
    #: ``I/N``: run only this shard of the plan
    shard: str | None = field(
        default=None,
        metadata=_cli(
            "--shard",
            help="Run only shard I of N of the plan (1-based; every task of a sample lands in the same shard), "
            "e.g. one per CI job; combine them with knowmeter merge. --budget-usd then applies to each shard; "
            "--resume continues a shard's run with its own shard.",
            metavar="I/N",
        ),
    )
    sequential: bool | None = field(
        default=None,
        metadata=_cli(
            "--sequential",
            help="Run the samples in batches, in a seeded random order, and stop as soon as the verdict is "
            "clear: group-sequential looks every tenth of the samples from --min-pairs on, Haybittle–Peto "
            "boundaries (interim p < 0.001, the last look at alpha: the fixed run's verdict if it runs to the end).",
            kind="switch",
        ),
    )
    sequential_design: str | None = field(
        default=None,
        metadata=_cli(
            "--sequential-design",
            help="The sequential design (implies --sequential): haybittle-peto (default) or obf "
            "(O'Brien–Fleming-type alpha spending, looks every fifth of the samples: exactly alpha, "
            "a little less power at the planned N).",
            choices=defaults.SEQUENTIAL_DESIGNS,
        ),
    )
    futility: bool | None = field(
        default=None,
        metadata=_cli(
            "--futility",
            help="Let a sequential look also stop when even a change of max_mde could no longer be shown by "
            "the planned samples (implies --sequential; saves tasks on a null change, costs some power).",
            kind="switch",
        ),
    )
    control_run: str | None = field(
        default=None,
        metadata=_cli(
            "--control-run",
            help="Take the control arm's results from stored run RUN instead of running it again; refused, "
            "naming the fields, unless its samples, control artifact, executor and version, model and "
            "answer-changing settings are the same.",
            metavar="RUN",
        ),
    )
    #: stop when the first N finished tasks failed the same way (0: never)
    max_errors: int | None = field(
        default=None,
        metadata=_cli(
            "--max-errors",
            help="Stop starting tasks when the first N finished tasks all failed the same way (one error "
            "class: the error's first line without its ids, numbers, quoted strings and paths) — a missing key, "
            "an unknown model, an agent CLI not installed; what finished is kept and --resume RUN finishes the "
            f"run. One success disarms it; 0 never stops (default {defaults.MAX_ERRORS}).",
            kind="int",
            low=0,
        ),
    )
    #: run only the first ``limit`` samples / only these sample ids (a subset, for debugging)
    limit: int | None = field(
        default=None,
        metadata=_cli(
            "--limit",
            help="Debugging: run only the first N samples (after --sample). The report and the sample-set "
            "watermark mark the run as a subset, so it is never compared or trended as a full run.",
            kind="int",
            low=1,
        ),
    )
    sample_ids: list[str] | None = field(
        default=None,
        metadata=_cli(
            "--sample",
            help="Debugging: run only this sample (repeatable); a subset run, as --limit.",
            multiple=True,
            metavar="ID",
        ),
    )


def flag_of(name: str) -> Flag:
    """The command-line definition of the ``Overrides`` field ``name``."""
    flag: Flag = next(f for f in fields(Overrides) if f.name == name).metadata["flag"]
    return flag


def settings_of(command: str) -> list[str]:
    """The ``Overrides`` fields ``command`` takes as options, in the order its help lists them."""
    return [f.name for f in fields(Overrides) if command in f.metadata["flag"].commands]


def given(opts: Mapping[str, object], command: str) -> dict[str, Any]:
    """``command``'s parsed options that are settings, by field name: a repeatable flag given no
    time is None (not given), as every absent option is. A setting ``opts`` lacks is a ``KeyError``:
    the command's option and the setting disagree on its name."""
    out: dict[str, Any] = {}
    for name in settings_of(command):
        value = opts[name]
        out[name] = (list(value) or None) if isinstance(value, tuple | list) else value
    return out


def bounds(name: str) -> Any:
    """The setting's bounds as the run configuration's field checks them (an
    ``annotated_types.Interval``, for ``Annotated``): it checks what the command line checks."""
    import annotated_types

    flag = flag_of(name)
    low, high = flag.low, flag.high
    return annotated_types.Interval(
        gt=low if flag.low_open else None,
        ge=None if flag.low_open else low,
        lt=high if flag.high_open else None,
        le=None if flag.high_open else high,
    )
