"""The run's outcome, decided once and only here: the comparison's verdict (``knowmeter.compare``,
or a comprehension run's skill verdict, taken as it is) plus everything that stops a run from
passing whatever its verdict says — nothing measured (most tasks errored, or most replies broke the
agent protocol), an incomplete run (halted, interrupted, stopped by the budget, killed), a judge
that never produced a score, a failed CI gate — and the warnings every summary shows (a budget
exceeded or not enforceable, stored results not counted, judge and executor trouble).

``settle`` is the one writer of a report's ``gates`` and ``decision`` (``Report.exit_code`` is
read from the decision); ``command_exit_code`` is the one place the exit code of ``eval``,
``report``, ``merge`` and ``comprehend`` is chosen (``--report-only``, Ctrl-C and SIGTERM
included). Everything else reads the ``Decision``: the terminal's first line is ``headline``,
its last ``recommendation``, Markdown, HTML and JUnit show ``outcome``, ``blockers`` and
``exit_code``, and ``knowmeter runs`` lists ``outcome``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from knowmeter.exit_codes import EXIT_INPUT, EXIT_NOT_PASSED, EXIT_OK, stopped_exit_code
from knowmeter.gates import Gates, check_gates
from knowmeter.report import OUTCOMES, Blocker, Decision, Outcome, Report, RunInfo, VariantOperations
from knowmeter.store import resume_command

#: A run whose errored tasks are at least this share of its finished tasks measured the
#: executor's failures, not the knowledge: it gets no verdict.
NOT_MEASURED_SHARE = 0.5

#: The executor warnings (``VariantOperations.exec_warnings``) of a reply that broke the agent
#: protocol: what was graded is not the answer the agent meant (stdout that starts like JSON
#: but does not parse, a reply without ``output``). From ``NOT_MEASURED_SHARE`` of the replies on,
#: the run measured the broken protocol, not the knowledge.
PROTOCOL_BREAKS = ("broken_envelope", "reply_output")


def _errors_line(variants: list[VariantOperations]) -> str:
    """``22 executor error (first: can't open file …); 3 timeout (first: …)`` over all variants."""
    causes: dict[str, list[Any]] = {}
    for v in variants:
        for cause, c in v.errors_by_cause.items():
            entry = causes.setdefault(cause, [0, c.first])
            entry[0] += c.count
    return "; ".join(f"{n} {cause} (first: {first})" for cause, (n, first) in causes.items())


def _not_measured(run: RunInfo, variants: list[VariantOperations]) -> Blocker | None:
    """Most finished tasks errored, or none finished in a run that ended complete (a run stopped
    before its first task finished is incomplete: resuming it measures)."""
    done = sum(v.tasks for v in variants)
    errors = sum(v.errors for v in variants)
    if done == 0:
        return Blocker(kind="not_measured", message="no task finished: nothing was measured") if run.complete else None
    if errors / done < NOT_MEASURED_SHARE:
        return None
    return Blocker(
        kind="not_measured",
        message=f"{errors} of {done} tasks errored — nothing about the knowledge "
        f"was measured: {_errors_line(variants)}",
    )


def _protocol_broken(variants: list[VariantOperations]) -> Blocker | None:
    """Most replies (finished tasks without an error) broke the agent protocol."""
    replies = sum(v.tasks - v.errors for v in variants)
    breaks = [(v.name, w) for v in variants for k, w in v.exec_warnings.items() if k in PROTOCOL_BREAKS]
    broken = sum(w.count for _, w in breaks)
    if not replies or broken / replies < NOT_MEASURED_SHARE:
        return None
    name, first = breaks[0]
    return Blocker(
        kind="not_measured",
        message=f"{broken} of {replies} replies broke the agent protocol — what was graded is not the "
        f"agent's answer, so nothing about the knowledge was measured (first, {name}: {first.first})",
    )


def _resume_command(run: RunInfo, comprehension: bool) -> str:
    """How to finish the run; a run the budget stopped needs a larger total, since what it spent
    so far counts against the total of every leg."""
    command = resume_command(run.id, comprehension=comprehension)
    budget = run.budget
    if run.incomplete == "budget" and budget is not None:
        charged = budget.in_flight_charged_usd  # calls a kill -9 left in flight, charged at their reservation
        command += f" --budget-usd TOTAL (above the ${budget.spent_known_usd + charged:.4f} spent so far"
        if run.tasks_done and run.tasks_total and budget.spent_known_usd > 0:
            # what the finished tasks cost on average (agent and judges), for every task of the plan
            whole = budget.spent_known_usd / run.tasks_done * run.tasks_total + charged
            unknown = sum(c.unknown_cost for c in budget.calls.values())
            command += f"; at the known cost per task so far the whole run needs about ${whole:.4f}" + (
                f", more for the {unknown} call(s) whose cost is unknown" if unknown else ""
            )
        command += ")"
    return command


def _incomplete(run: RunInfo, comprehension: bool) -> Blocker | None:
    if run.complete:
        return None
    resume = _resume_command(run, comprehension)
    why = run.partial.reason if run.partial else f"the run ended {run.status}"
    if resume not in why:
        why += f"; finish it with {resume}"
    return Blocker(kind="incomplete", message=f"{run.tasks_done}/{run.tasks_total} tasks — {why}")


def _budget_warnings(run: RunInfo) -> list[str]:
    from knowmeter.runner import budget_warnings

    if run.budget is None:
        return []
    return budget_warnings(run.budget.model_dump(), run.config.concurrency)


def _judging(run: RunInfo, variants: list[VariantOperations]) -> tuple[Blocker | None, list[str]]:
    """A judge configured but never successful blocks the run; partial failures and samples
    without a rubric are warnings."""
    if not run.judges:
        return None, []
    judged = sum(v.judging.judged for v in variants)
    failed = sum(v.judging.failed for v in variants)
    no_rubric = sum(v.judging.no_rubric for v in variants)
    metrics_scored = sum(v.judging.metrics_scored for v in variants)
    metrics_failed = sum(v.judging.metrics_failed for v in variants)
    first = next((v.judging.first_error for v in variants if v.judging.first_error), None)
    graded = judged + failed + no_rubric
    warnings = []
    if no_rubric:
        warnings.append(
            f"judge: {no_rubric} of {graded} graded tasks have no rubric or dimensions, so "
            "no judge was asked (add a rubric to those samples to judge them)"
        )
    if failed or metrics_failed:
        warnings.append(
            f"judge: failed on {failed} task(s) and {metrics_failed} judge-backed assertion(s); first error: {first}"
        )
    if graded and judged == 0 and metrics_scored == 0:
        why = f"every call failed (first error: {first})" if first else "no sample has a rubric or dimensions"
        return Blocker(kind="judge_failed", message=f"the judge never produced a score: {why}"), warnings
    return None, warnings


def _recommendation(blocker: Blocker, run: RunInfo, comprehension: bool) -> str:
    again = f"run knowmeter {'comprehend' if comprehension else 'eval'} again"
    if blocker.kind == "not_measured":
        what = "agent's replies" if "agent protocol" in blocker.message else "executor errors"
        if run.incomplete == "halted":
            again = f"finish the run with {_resume_command(run, comprehension)}"
        return f"FIX THE RUN — nothing was measured; fix the {what} above and {again}."
    if blocker.kind == "incomplete":
        return (
            f"NOT DECIDED — the run is incomplete ({run.tasks_done}/{run.tasks_total} tasks); "
            f"finish it with {_resume_command(run, comprehension)}."
        )
    if blocker.kind == "judge_failed":
        return f"DO NOT SHIP YET — the configured judge never scored; fix it (see above) and {again}."
    return f"DO NOT SHIP — a gate failed: {blocker.message}."


#: what to do after a comprehension verdict (by its rule, else its level): a comprehension verdict
#: carries no ship recommendation of its own, and an empty "what to do" tells the reader nothing
_COMPREHENSION_ADVICE = {
    "PASS": "THE SKILL PASSES — the agent understood it on every graded dimension, better than without it.",
    "PROVISIONAL": "PASSES WITH CAVEATS — every graded case passes; confirm it under the caveats above "
    "(Skill Graph's PASS needs two independent grader models).",
    "SHALLOW": "FIX THE SKILL — with it the agent fails the dimensions named above; rework what they test.",
    "REDUNDANT": "THE SKILL CHANGES NOTHING MEASURABLE — the agent does as well without it.",
    "SKIPPED_BASELINE_HIGH": "WRITE HARDER CASES — the agent passes every case without the skill, so this eval "
    "cannot show what the skill teaches.",
    "cannot_tell": "NOT VERIFIED — the run cannot tell the skill from the baseline: add cases or repeats (--repeat).",
    "ungraded": "NOT VERIFIED — some answers were not graded: run the same command again to grade them "
    "(the answers are cached).",
    "nothing_graded": "NOT VERIFIED — nothing was graded: fix the grader (see above) and run knowmeter "
    "comprehend again.",
}


def _advice(report: Report) -> str:
    """The recommendation of a decision with nothing blocking: the verdict's own, or for a
    comprehension verdict the advice for its rule or level."""
    if report.verdict is not None:
        return report.verdict.ship_recommendation
    comp = report.comprehension.verdict if report.comprehension else None
    if comp is None:
        return ""
    return _COMPREHENSION_ADVICE.get(comp.rule) or _COMPREHENSION_ADVICE.get(str(comp.level), "")


def decide(report: Report) -> Decision:
    """The decision for a built report (its ``run``, ``variants``, verdict and ``gates``)."""
    run, variants = report.run, report.variants
    # a comprehension run (knowmeter comprehend) carries its skill verdict in its own section
    verdict = report.verdict or (report.comprehension.verdict if report.comprehension else None)
    level = str(verdict.level) if verdict is not None else None
    comprehension = report.comprehension is not None
    measured = _not_measured(run, variants) or _protocol_broken(variants)
    blockers = [b for b in (measured, _incomplete(run, comprehension)) if b is not None]
    judge_blocker, judge_warnings = _judging(run, variants)
    warnings = _budget_warnings(run)
    warnings += [f"results.jsonl: {problem}" for problem in run.results_problems or []]
    warnings += judge_warnings
    warnings += [f"{v.name}: {w.count} task(s): {w.first}" for v in variants for w in v.exec_warnings.values()]
    if judge_blocker is not None:
        blockers.append(judge_blocker)
    blockers += [
        Blocker(kind="gate_failed", message=g.message)
        for g in (report.gates.results if report.gates else [])
        if not g.passed
    ]
    if not blockers:
        headline = (verdict.headline if verdict is not None else "") or level or "no verdict"
        if level and not headline.startswith(level):
            headline = f"{level} · {headline}"
        # a verdict's 0, and a comprehension verdict's 2 (its grader's replies broke the rules: bad input)
        code = (
            verdict.exit_code if verdict is not None and verdict.exit_code in (EXIT_OK, EXIT_INPUT) else EXIT_NOT_PASSED
        )
        recommendation = _advice(report)
        # no verdict and nothing blocking: only a report built without its analysis sections
        outcome = cast(Outcome, level) if level else "NOT MEASURED"
        return Decision(
            outcome=outcome,
            verdict=level,
            exit_code=code,
            headline=headline,
            recommendation=recommendation,
            warnings=warnings,
        )
    first = blockers[0]
    outcome = OUTCOMES[first.kind]
    # nothing measured: the comparison's level (UNDERPOWERED over no pairs) is no verdict at all
    level = None if first.kind == "not_measured" else level
    shown = f"verdict on what was measured: {level}" if level else "no verdict"
    return Decision(
        outcome=outcome,
        verdict=level,
        exit_code=EXIT_NOT_PASSED,
        headline=f"{outcome} · {first.message} ({shown})",
        recommendation=_recommendation(first, run, comprehension),
        blockers=blockers,
        warnings=warnings,
        incomplete=run.incomplete,
    )


def gated_rates(report: Report) -> dict[str, float | None]:
    """The gap rate of each variant a CI gate applies to (``Report.gated_variants``)."""
    gated = report.gated_variants()
    return {
        g.variant: g.gap_rate
        for g in (report.gaps.variants if report.gaps else [])
        if g.variant is not None and g.variant in gated
    }


def settle(report: Report, previous: Mapping[str, tuple[str, float | None]]) -> Decision:
    """Gate and decide a built report — the one writer of its ``gates`` and ``decision``: the
    configured gap-rate gates on the gated variants (``previous``: each variant's (run id, gap
    rate) of its last earlier run on the same sample set, for ``--gap-rate-regression``), then
    the decision, which reads them."""
    run = report.run
    report.gates = Gates(
        results=check_gates(
            gated_rates(report),
            previous,
            sample_set=run.watermark.id,
            max_gap_rate=run.config.max_gap_rate,
            regression=run.config.gap_rate_regression,
        )
    )
    report.decision = decide(report)
    return report.decision


def command_exit_code(
    decision: Decision | None, *, report_only: bool = False, stop: BaseException | None = None
) -> int:
    """The exit code of ``eval``, ``report``, ``merge`` and ``comprehend`` for a run: ``stop``
    (Ctrl-C, SIGTERM) gives ``EXIT_INTERRUPTED`` / ``EXIT_TERMINATED`` whatever else holds;
    ``--report-only`` gives ``EXIT_OK``; otherwise the decision's ``exit_code`` (a report never
    decided — none is written so — does not pass)."""
    if stop is not None:
        return stopped_exit_code(stop)
    if report_only:
        return EXIT_OK
    return decision.exit_code if decision is not None else EXIT_NOT_PASSED
