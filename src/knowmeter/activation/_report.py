"""The activation report of a stored run, built from ``run.json`` and ``results.jsonl`` alone
(so it can be rebuilt without re-running), written as ``activation.json``.

Its outcome and exit code are decided here (``activation._compare.verdict``), not by
``knowmeter.decision``: that one decides an eval's ``Report`` — composite and layer scores, gap
gates, judge agreement, the comparison's ``Verdict`` — none of which an activation run has. An
activation run measures two rates (recall on should-trigger cases, false activations on the
others) with its own outcomes (PROGRESS, REGRESS, NOISE, UNDERPOWERED, SOLO, NOT MEASURED). What
the two share is read from ``decision``: the share of failed tasks past which a run measured
the executor (``NOT_MEASURED_SHARE``); the exit codes are ``knowmeter.exit_codes``' (0 only for
PROGRESS or a SOLO run; an interrupted run ``stopped_exit_code`` as ``eval``'s)."""

from __future__ import annotations

from knowmeter.activation._cases import ActivationCase
from knowmeter.activation._compare import compare_arms, solo_reasons, split_cases, verdict
from knowmeter.activation._html import html_report
from knowmeter.activation._model import ActivationReport, ArmFigures, CaseSet
from knowmeter.activation._run import CONTROL, TREATMENT, trials_of
from knowmeter.activation._stats import arm_figures
from knowmeter.decision import NOT_MEASURED_SHARE
from knowmeter.errors import InputError
from knowmeter.exit_codes import EXIT_NOT_PASSED, EXIT_OK
from knowmeter.store import RunActivation, RunDir, atomic_file, task_records, write_json_atomic

__all__ = ["ACTIVATION_FILE", "HTML_FILE", "activation_report"]

ACTIVATION_FILE = "activation.json"
HTML_FILE = "activation.html"


def _cases(act: RunActivation) -> dict[str, ActivationCase]:
    return {
        sid: ActivationCase(c.case_id, c.prompt, c.should_trigger, tuple(c.distractors), c.expected_winner)
        for sid, c in act.cases.items()
    }


def activation_report(run_dir: RunDir, *, write: bool = True) -> ActivationReport:
    """The report of the run in ``run_dir`` (written to its ``activation.json`` when ``write``)."""
    run = run_dir.read_run()
    act, cfg = run.activation, run.config
    if act is None:
        raise InputError(f"run {run_dir.id} is not an activation run; see it with knowmeter report {run_dir.id}")
    skill = act.skill
    cases = _cases(act)
    arms = trials_of(task_records(run_dir.results_file), cases, skill)
    kw = {"b": cfg.bootstrap_samples, "seed": run.seed}
    figures: list[ArmFigures] = [arm_figures(name, skill, trials, **kw) for name, trials in sorted(arms.items())]
    comparisons, split = [], None
    outcome, reasons, code = "SOLO", [], EXIT_OK
    trials = sum(f.trials for f in figures)
    errors = sum(f.errors for f in figures)
    if not trials or errors >= NOT_MEASURED_SHARE * trials:
        outcome, code = "NOT MEASURED", EXIT_NOT_PASSED
        reasons = [f"{errors} of {trials} task(s) failed: the run measured the executor's failures, not the skill"]
    elif CONTROL in arms and TREATMENT in arms:
        pair = ((CONTROL, arms[CONTROL]), (TREATMENT, arms[TREATMENT]))
        comparisons.append(compare_arms("all", skill, *pair, **kw))  # type: ignore[arg-type]
        judged, note = comparisons[0], []
        if act.target.split:
            split = split_cases({sid: c.should_trigger for sid, c in cases.items()}, kw["seed"])
            for part in ("tune", "held-out"):
                keep = set(split[part])
                sub = tuple((n, [t for t in ts if t.case_id in keep]) for n, ts in pair)
                comparisons.append(compare_arms(part, skill, *sub, **kw))  # type: ignore[arg-type]
            judged = comparisons[-1]  # the verdict comes from the cases the description was not tuned on
            note = [f"judged on the held-out {len(split['held-out'])} case(s) (--split):"]
        outcome, reasons, code = verdict(judged)
        reasons = note + reasons
    elif figures:
        reasons = solo_reasons(figures[0])
    report = ActivationReport(
        run_id=run_dir.id,
        created_at=run.created_at,
        skill=skill,
        case_set=CaseSet(paths=list(run.watermark.paths), count=run.watermark.count, sha256=run.watermark.sha256),
        case_files=[f.model_dump() for f in act.case_files],
        cases=len(cases),
        case_ids=list(cases),
        repeats=cfg.repeat,
        counts=act.target.counts,
        executor=run.executor.name,
        model=run.executor.model,
        distractors=sorted({d for c in cases.values() for d in c.distractors}),
        notes=act.notes,
        arms=figures,
        comparisons=comparisons,
        split=split,
        verdict=outcome,  # type: ignore[arg-type]
        reasons=reasons,
        exit_code=code,
    )
    if write:
        write_json_atomic(run_dir.path / ACTIVATION_FILE, report.model_dump(mode="json"))
        with atomic_file(run_dir.path / HTML_FILE) as fh:
            fh.write(html_report(report).encode())
    return report
