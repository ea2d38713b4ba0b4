"""``knowmeter comprehend``: grade whether an agent understood a skill (rubric C1–C9), paired
baseline vs with-skill."""

from __future__ import annotations

import sys
from typing import Any

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded
from knowmeter.cli._settings import setting_options
from knowmeter.settings import COMPREHEND

# comprehend's own options, placed among the settings it shares with eval
_EVALS = click.option(
    "--evals",
    help="The skill's eval file (default: found where skill lint finds it: <skill>/evals/comprehension.json, "
    "<skill>/evals/evals.json, examples/evals/<name>.json or evals/<name>.json beside the skills/ folder, "
    "then at the repository root, else a file there whose skill_name is the skill).",
)
_EXECUTOR = click.option(
    "--executor",
    default=defaults.EXECUTOR,
    show_default=True,
    help="The agent: any registered executor "
    "(offline, claude, codex, openai, anthropic, claude-sdk, script) or a script-protocol command.",
)
_JUDGES = click.option(
    "--judge",
    "judges",
    multiple=True,
    help="Grader as executor:model (repeatable for an ensemble; "
    "a behavior passes on a majority). scripted-grader is a deterministic offline stand-in.",
)
_REPEAT = click.option(
    "--repeat",
    type=click.IntRange(1, 100),
    default=defaults.REPEAT,
    show_default=True,
    help="Real replicates per case and arm.",
)
_JUDGE_REPEAT = click.option(
    "--judge-repeat",
    type=click.IntRange(1, 20),
    default=defaults.JUDGE_REPEAT,
    show_default=True,
    help="Grader calls per answer and grader.",
)
_NGRAM = click.option(
    "--ngram",
    type=click.IntRange(2, 50),
    default=defaults.VERBATIM_NGRAM,
    show_default=True,
    help="n of the verbatim-overlap check (research A.3).",
)
_CWD = click.option(
    "--cwd",
    help="Folder the agent works in, in both arms (default: an empty folder, so the "
    "baseline cannot read the skill from disk).",
)


@click.command("comprehend")
@click.argument("skill", required=False)
@setting_options(
    COMPREHEND,
    before={"model": [_EVALS, _EXECUTOR], "concurrency": [_JUDGES, _REPEAT, _JUDGE_REPEAT, _NGRAM, _CWD]},
)
@click.option("--resume", "resume", help="Continue a killed comprehension run: only its missing tasks.")
@click.option(
    "--write-state",
    is_flag=True,
    help="Record the verdict in the skill's audit-state.json (v8): "
    "comprehension_verdict, eval_score, eval_failed_ids, eval_last_run; every other field is kept. "
    "A v4 / v6 skill without one: the eval fields its frontmatter schema has (eval_last_run; v6 also "
    "eval_score, eval_failed_ids).",
)
@click.option(
    "--calibrate",
    is_flag=True,
    help="Before grading, grade anchor answers of known quality and check that each lands in its band "
    "(see --anchors, --on-miscalibration).",
)
@click.option(
    "--on-miscalibration",
    type=click.Choice(["refuse", "flag"]),
    default="refuse",
    show_default=True,
    help="When --calibrate finds an anchor outside its band: refuse to grade with that grader (exit 1), or "
    "grade anyway and flag the run (a caveat: it cannot PASS).",
)
@click.option(
    "--anchors",
    type=click.Path(dir_okay=False),
    help="The anchor file for --calibrate (default: <eval file stem>.anchors.json beside the eval file).",
)
@click.option("--json", "as_json", is_flag=True, help="Print report.json to stdout instead of the summary.")
@guarded
def comprehend_cmd(**opts: Any) -> None:
    """Measure whether the agent understood SKILL (a SKILL.md or its folder): every case of its
    eval file runs without the skill (baseline) and with it, each answer is graded per expected
    behavior by the research's Appendix A grader after a deterministic verbatim-copy check, and
    the paired difference gives the skill's verdict in Skill Graph's levels: PASS (confirmed by
    two independent graders), PROVISIONAL (a real pass of lower confidence), SHALLOW, REDUNDANT,
    SKIPPED_BASELINE_HIGH or UNVERIFIED (also: the run cannot tell the skill from the baseline);
    NA when the skill has no eval file (nothing runs; --write-state records it). A *.routing.json
    file is a routing eval: comprehend does not run it.

    Exit codes (the run's decision, as report.json and knowmeter report give it): 0 PASS or
    PROVISIONAL, 1 any other verdict — UNVERIFIED when a grader call failed on an answer —, 2 bad
    input (NA included) or a grader reply that broke the rules twice (UNVERIFIED; the run is
    stored and the agent's answers are cached, so the same command re-grades).
    """
    from knowmeter.cli._comprehend_run import run_comprehend
    from knowmeter.cli._options import ComprehendOptions

    sys.exit(run_comprehend(ComprehendOptions.of(opts)))
