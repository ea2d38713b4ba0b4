"""``knowmeter activation``: does the agent load the skill when it should, and only then?"""

from __future__ import annotations

import sys
from typing import Any

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded
from knowmeter.cli._output import NumberRange, budget_option, ci_output_options
from knowmeter.cli._settings import setting_option


@click.command("activation")
@click.argument("skill", required=False)
@click.option(
    "--cases",
    "case_files",
    multiple=True,
    help="Case file (repeatable): plain YAML/JSON (prompt, should_trigger, distractors, expected_winner), "
    "a Skill Graph SKILL.md (examples / anti_examples), a Skill Graph *.routing.json, or a skill-creator "
    "trigger eval ([{query, should_trigger}]). Default: SKILL's own examples / anti_examples.",
)
@click.option("--against", help="B version of the skill (a SKILL.md or its folder, same name): A/B with a verdict.")
@click.option("--description", help="B version = SKILL with this frontmatter description: A/B with a verdict.")
@click.option(
    "--skills-dir",
    "skills_dirs",
    multiple=True,
    help="Folder holding <name>/SKILL.md for the distractors named in the cases (repeatable; "
    "default: the folder holding SKILL's folder).",
)
@click.option(
    "--distractor",
    "distractors",
    multiple=True,
    help="Skill installed beside SKILL in every case that names no distractors of its own (a name found in "
    "--skills-dir, or a path; repeatable).",
)
@click.option(
    "--counts",
    type=click.Choice(["either", "skill-tool", "read"]),
    default="either",
    show_default=True,
    help="What counts as an activation: a Skill tool call naming the skill, a read of its SKILL.md, or either "
    "(both are always recorded).",
)
@click.option(
    "--split",
    is_flag=True,
    help="Also judge A/B on a seeded 60/40 split stratified by should_trigger; "
    "the verdict comes from the held-out 40%.",
)
@click.option(
    "--executor",
    default=defaults.EXECUTOR,
    show_default=True,
    help="The agent: claude, claude-sdk, codex or offline (it loads a skill whose description matches the prompt).",
)
@click.option("--model", help="Model passed to the agent's executor.")
@setting_option("executor_options", "activation")
@click.option(
    "--repeat", type=click.IntRange(1, 100), default=3, show_default=True, help="Trials per case and version."
)
@click.option("--concurrency", type=click.IntRange(1, 256), help=f"Tasks run at once (default {defaults.CONCURRENCY}).")
@click.option("--timeout", "timeout_s", type=NumberRange(min=0.001), help="Per-task timeout in seconds.")
@click.option("--retry", type=click.IntRange(0, 10), help="Retries on executor errors.")
@click.option("--no-cache", is_flag=True, default=False, help="Do not read or write the response cache.")
@budget_option("Total cost budget over every agent call.")
@click.option("--seed", type=int, help="Seed of the statistics (and of --split).")
@click.option(
    "--output-dir", help=f"Where runs are stored (default: {defaults.OUTPUT_DIR}; runs go to <dir>/activation/runs)."
)
@click.option(
    "--resume",
    help="Continue a killed activation run (its id, a prefix, latest or its folder): only its missing tasks run.",
)
@click.option(
    "--report",
    "report_run",
    metavar="RUN",
    help="Rebuild a stored activation run's figures, verdict, activation.json and .html from its results alone "
    "(nothing runs), and print them.",
)
@click.option(
    "--trends",
    is_flag=True,
    help="Print recall and false-activation rate across the stored activation runs of each skill and case set "
    "(only runs on the same cases are compared), then exit.",
)
@click.option("--json", "as_json", is_flag=True, help="Print activation.json to stdout instead of the summary.")
@ci_output_options
@guarded
def activation_cmd(**opts: Any) -> None:
    """Measure whether the agent loads SKILL (a SKILL.md or its folder) when it should, and only
    then. Every case runs --repeat times with only that case's skills installed (SKILL and the
    case's distractors; an agent CLI in a sealed workspace of its own); activation is read from
    the whole trace. Prints
    recall, false-activation rate, precision and F1 with intervals clustered by case, the cases
    that failed and, for routing cases, top-1 accuracy. With --against or --description it runs
    both versions paired by case and repeat and gives a verdict: PROGRESS, REGRESS, NOISE or
    UNDERPOWERED.

    Exit codes: 0 PROGRESS, or a one-version run that measured; 1 any other verdict or a run whose
    tasks mostly failed (NOT MEASURED); 2 bad input.
    """
    from knowmeter.cli._activation_run import run
    from knowmeter.cli._options import ActivationOptions

    sys.exit(run(ActivationOptions.of(opts)))
