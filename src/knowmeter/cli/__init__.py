"""knowmeter's command line. Commands live in ``_<name>.py`` modules and are imported only
when invoked, so ``knowmeter --help`` stays fast."""

from __future__ import annotations

import importlib
import sys

import click

#: command name -> (module, attribute, one-line help shown by ``knowmeter --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("_init", "init_cmd", "Scaffold a runnable offline demo (skills, knowledge, samples, eval.yaml)."),
    "eval": ("_eval", "eval_cmd", "Run samples through the agent under each variant, grade, compare, decide."),
    "report": ("_report", "report_cmd", "Re-render and re-decide a stored run without re-running it."),
    "merge": ("_merge", "merge_cmd", "Merge the shards of one plan (eval --shard I/N) into one run and report."),
    "runs": ("_runs", "runs_cmd", "List stored runs."),
    "show": ("_show", "show_cmd", "One sample of a run: each answer, its assertions, scores, judges and trace."),
    "gaps": ("_gaps", "gaps_cmd", "Show the knowledge-gap inventory of a run."),
    "trends": ("_trends", "trends_cmd", "Gap rate, coverage and composite across runs of one sample set."),
    "probe": (
        "_probe",
        "probe_cmd",
        "Competency questions from the knowledge base's structure, as a probe sample set.",
    ),
    "sample": ("_sample", "sample_cmd", "Draft new samples from a run's gaps and uncovered files."),
    "gold": ("_gold", "gold_group", "Human gold sets: init, validate, compare a run against one."),
    "view": ("_view", "view_cmd", "Browse runs, reports, comparisons and trends in a local read-only web viewer."),
    "observe": ("_observe", "observe_cmd", "Skill health from real Claude Code / Codex usage traces."),
    "docs": (
        "_docs",
        "docs_cmd",
        "Reference: assertion types, script protocol, judge replies, cache, commands; JSON Schemas.",
    ),
    "skill": ("_skill", "skill_group", "Skill Graph skills and eval files: lint."),
    "comprehend": (
        "_comprehend",
        "comprehend_cmd",
        "Did the agent understand a skill? Rubric C1–C9, with vs without it.",
    ),
}


class LazyGroup(click.Group):
    """A click group that imports a command's module only when that command runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if _module_exists(COMMANDS[name][0])]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not _module_exists(entry[0]):
            return None
        module = importlib.import_module(f"knowmeter.cli.{entry[0]}")
        cmd = getattr(module, entry[1])
        assert isinstance(cmd, click.Command)
        cmd.short_help = cmd.short_help or entry[2]  # what knowmeter --help lists it with
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _module_exists(module: str) -> bool:
    from importlib.util import find_spec

    return find_spec(f"knowmeter.cli.{module}") is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="knowmeter")
def cli() -> None:
    """knowmeter: did the change to your agent's knowledge make it better?

    Runs the same samples through the real agent under each variant of a knowledge artifact
    (skill, prompt, CLAUDE.md, RAG corpus), grades the answers, compares the variants with paired
    statistics and returns a verdict: PROGRESS, CAUTIOUS, REGRESS, NOISE, UNDERPOWERED or SOLO.
    """


def main() -> None:
    """Console-script entry point."""
    from knowmeter.cli._streams import survive_closed_pipes

    survive_closed_pipes()  # a reader who stops early (| head) must not change the exit code
    try:
        cli.main(prog_name="knowmeter", standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.exit(130)
    except Exception as exc:  # a bug: one line + a log file, its own exit code
        from knowmeter.cli._errors import crash

        crash(exc)
