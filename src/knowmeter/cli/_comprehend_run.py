"""The body of ``knowmeter comprehend`` (kept apart so the command module stays import-light)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowmeter import defaults
from knowmeter.api import Listener, RunInterrupted, comprehend, resume
from knowmeter.ask import unusable_reply
from knowmeter.cli._options import ComprehendOptions
from knowmeter.cli._output import interrupted_line
from knowmeter.comprehension import grader_model, state_update, summary_lines, write_state
from knowmeter.decision import command_exit_code
from knowmeter.errors import InputError
from knowmeter.evaluation import Prepared, parse_option_flags
from knowmeter.exit_codes import EXIT_INPUT, EXIT_NOT_PASSED
from knowmeter.report import Report
from knowmeter.store import RunDir, find_run

if TYPE_CHECKING:
    from knowmeter.skillgraph import Skill


class _Terminal(Listener):
    """Prints the run's plan and the budget's note to stderr."""

    run_dir: RunDir | None = None

    def started(self, prepared: Prepared, run_dir: RunDir, tasks: int, *, resumed: bool) -> None:
        self.run_dir = run_dir
        if resumed:
            click.echo(f"resuming run {run_dir.id}: {tasks} of {len(prepared.tasks)} tasks left", err=True)
            return
        click.echo(
            f"run {run_dir.id}: {len(prepared.sample_set.samples)} cases × 2 arms × {prepared.config.repeat} "
            f"repeat(s) = {tasks} tasks ({prepared.executor.name}); graders: "
            f"{', '.join(j.name for j in prepared.judges)}",
            err=True,
        )

    def note(self, line: str) -> None:
        click.echo(line, err=True)


def run_comprehend(opts: ComprehendOptions) -> int:
    """Run (or resume) a comprehension measurement; returns the exit code (after Ctrl-C or
    SIGTERM, ``EXIT_INTERRUPTED`` / ``EXIT_TERMINATED``: the finished tasks are kept and reported,
    and the line that resumes the run is printed)."""
    terminal = _Terminal()
    flags: list[str] = []
    notes: list[str] = []
    if opts.calibrate:
        headline, flag = _calibrate(opts)
        notes.append(headline)
        if flag is not None and opts.on_miscalibration == "refuse":
            click.echo(
                f"knowmeter: {flag}: not grading with this grader (--on-miscalibration flag grades anyway and flags "
                "the run)",
                err=True,
            )
            return EXIT_NOT_PASSED
        flags += [flag] if flag is not None else []
    try:
        report = _run(opts, terminal, flags, notes)
    except RunInterrupted as stop:
        _print(stop.report, terminal, opts)
        click.echo(interrupted_line(stop, opts.settings.output_dir), err=True)
        return command_exit_code(stop.report.decision, stop=stop)
    run_dir = _print(report, terminal, opts)
    if opts.write_state:
        _write_state(run_dir, report)
    code = command_exit_code(report.decision)
    broken = [
        u for u in (report.comprehension.ungraded if report.comprehension else []) if unusable_reply("judge") in u
    ]
    if code == EXIT_INPUT and broken:  # bad input: one line naming the file and the first case
        click.echo(
            f"knowmeter: error: {run_dir.results_file}: {broken[0]}; {len(broken)} answer(s) in all: the run is "
            "stored and the agent's answers are cached: run the same command again to re-grade",
            err=True,
        )
    return code  # the run's one decision (report.json's, and knowmeter report's)


def _calibrate(opts: ComprehendOptions) -> tuple[str, str | None]:
    """Grade the anchors before anything runs and print how each landed; the headline (the run
    records it) and the run's flag when one missed."""
    from knowmeter.comprehension import calibration_flag, calibration_summary, run_calibration

    if opts.resume or not opts.skill:
        raise InputError("--calibrate checks the grader before a new run: give SKILL (not --resume)")
    results = run_calibration(
        Path(opts.skill),
        Path(opts.evals) if opts.evals else None,
        ngram=opts.ngram,
        judges=list(opts.judges),
        judge_repeat=opts.judge_repeat,
        anchors=Path(opts.anchors) if opts.anchors else None,
    )
    lines = calibration_summary(results, ", ".join(opts.judges))
    for line in lines:
        click.echo(line, err=True)
    return lines[0], calibration_flag(results)


def _run(opts: ComprehendOptions, terminal: _Terminal, flags: list[str], notes: list[str]) -> Report:
    """The run made or resumed as the options say."""
    settings = opts.settings
    if opts.resume:
        run_dir = find_run(Path(settings.output_dir or defaults.OUTPUT_DIR), opts.resume)
        stored = run_dir.read_run().comprehension
        if stored is None:
            raise InputError(f"run {run_dir.id} is not a comprehension run; resume it with knowmeter eval --resume")
        if opts.write_state:
            _state_home(Path(stored.skill.path))
        report = resume(run_dir.path, listener=terminal, budget_usd=settings.budget_usd)
    elif not opts.skill:
        raise InputError("comprehend needs a SKILL (a SKILL.md or its folder), or --resume RUN")
    else:
        if opts.write_state:
            from knowmeter.skillgraph import find_case_files

            skill = _state_home(Path(opts.skill))
            no_evals = not opts.evals and not find_case_files(skill)
            if no_evals and skill.audit_state_path is not None:  # nothing to measure: Skill Graph's NA
                before, _ = write_state(skill.audit_state_path, {"comprehension_verdict": "NA"})
                click.echo(
                    f"audit-state: {skill.audit_state_path}: comprehension_verdict "
                    f"{before['comprehension_verdict']} → NA (the skill has no comprehension eval file)",
                    err=True,
                )
        report = comprehend(
            opts.skill,
            evals=opts.evals,
            ngram=opts.ngram,
            cwd=opts.cwd,
            executor=opts.executor,
            judges=list(opts.judges),
            repeat=opts.repeat,
            judge_repeat=opts.judge_repeat,
            model=settings.model,
            executor_options=parse_option_flags(settings.executor_options),
            concurrency=settings.concurrency,
            timeout_s=settings.timeout_s,
            retry=settings.retry,
            no_cache=settings.no_cache,
            budget_usd=settings.budget_usd,
            seed=settings.seed,
            output_dir=settings.output_dir,
            listener=terminal,
            flags=flags,
            notes=notes,
        )
    return report


def _print(report: Report, terminal: _Terminal, opts: ComprehendOptions) -> RunDir:
    """report.html beside report.json, then the summary (or the JSON) on stdout; the run's folder."""
    assert terminal.run_dir is not None
    run_dir = terminal.run_dir
    from knowmeter.report import write_outputs

    written = write_outputs(report, html=run_dir.path / "report.html")
    if opts.as_json:
        from knowmeter.cli._output import print_json

        print_json(report.to_dict())
    else:
        for line in summary_lines(report):
            click.echo(line)
        for warning in report.decision.warnings if report.decision else []:
            click.echo(f"⚠ {warning}")
        click.echo(f"report: {run_dir.report_file}")
        for what, path in written:
            click.echo(f"{what}: {path}")
    return run_dir


def _state_home(skill_path: Path) -> Skill:
    """Where --write-state can record the run, checked before any task runs (and is paid for):
    the v8 ``audit-state.json``, else a v4 / v6 source frontmatter; a v8 skill without its sidecar,
    a marketplace export and a frontmatter whose schema has no eval field (v3) are refused."""
    from knowmeter.skillgraph import load_skill

    skill = load_skill(skill_path)
    if skill.audit_state_path is None and (skill.shape == "v8" or skill.export is not None):
        what = "a marketplace export" if skill.export is not None else "a v8 skill"
        raise InputError(
            f"{skill.path.parent / 'audit-state.json'}: no audit-state.json beside the SKILL.md of {what}; "
            "--write-state updates a Skill Graph sidecar and does not create one (run without --write-state, "
            "or add the file)"
        )
    if skill.audit_state_path is not None:
        from knowmeter.skillgraph import read_audit_state

        read_audit_state(skill.audit_state_path, unique_keys=True)  # what the rewrite would drop: refused now
    else:
        from knowmeter.comprehension import frontmatter_refusal

        refusal = frontmatter_refusal(skill)
        if refusal is not None:
            raise InputError(f"{skill.path}: {refusal}")
    return skill


def _write_state(run_dir: RunDir, report: Report) -> None:
    comp = report.comprehension
    if comp is None:
        return
    path = Path(comp.skill.audit_state or comp.skill.path)
    if comp.ungraded:  # the grader failed: the run says nothing new about the skill
        click.echo(
            f"audit-state: {path}: not written: {len(comp.ungraded)} answer(s) left ungraded; "
            "run the same command again to re-grade them",
            err=True,
        )
        return
    blockers = report.decision.blockers if report.decision else []
    if blockers:  # an incomplete run: its verdict rests on the tasks that happened to run
        click.echo(f"audit-state: {path}: not written: {blockers[0].message}", err=True)
        return
    update = state_update(
        comp.verdict,
        at=report.run.finished_at,
        runner=f"knowmeter comprehend ({report.run.executor.name})",
        model=grader_model(comp.graders),
        receipt=run_dir.report_file,
        skill_dir=path.parent,
    )
    if comp.skill.audit_state is None:  # a v4 / v6 skill: the eval fields its frontmatter has
        _write_frontmatter(path, update)
        return
    before, problems = write_state(path, update)
    score = update.get("eval_score")
    click.echo(
        f"audit-state: {path}: comprehension_verdict {before['comprehension_verdict']} → "
        f"{update['comprehension_verdict']}, eval_score {'unknown' if score is None else f'{score:g}'}",
        err=True,
    )
    for problem in problems:  # the author's fields, kept as they are: named so Skill Graph's lint is no surprise
        click.echo(
            f"audit-state: {path}: warning: {problem} (a field --write-state does not own; fix it by hand)", err=True
        )


def _write_frontmatter(path: Path, update: dict[str, Any]) -> None:
    from knowmeter.comprehension import frontmatter_update, write_frontmatter_state
    from knowmeter.skillgraph import load_skill

    skill = load_skill(path)
    fields = frontmatter_update(skill, update)
    write_frontmatter_state(skill, fields)
    click.echo(
        f"SKILL.md: {path}: {', '.join(fields)} written ({skill.shape} has no field for the verdict "
        f"{update['comprehension_verdict']}: eval_last_run.receipt names the report that holds it)",
        err=True,
    )
