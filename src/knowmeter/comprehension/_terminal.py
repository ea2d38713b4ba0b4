"""The terminal summary of a comprehension report: who answered and graded (non-LLM parties
labelled as such), per-dimension pass rates per arm with Wilson intervals, the paired difference,
the run's outcome when something blocks it (an incomplete run), the verdict with its named
exceptions, and each case's failed behaviors and ungraded reasons. A run in which nothing was
measured (most tasks errored: NOT MEASURED) gets no table, verdict, eval_score or case FAIL —
its outcome, why, and what to do."""

from __future__ import annotations

from knowmeter.report import ComprehensionArm, ComprehensionSection, Report


def _rate(arm: ComprehensionArm) -> str:
    if not arm.cases_graded or not arm.wilson:
        return "—"
    lo, hi = arm.wilson
    return f"{arm.cases_passed}/{arm.cases_graded} [{lo:.2f},{hi:.2f}]"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _party(name: str, model: str | None, non_llm: bool, kind: str) -> str:
    label = f"{name}" + (f" ({model})" if model and model not in name else "")
    return label + (f" — deterministic {kind}, not an LLM" if non_llm else "")


def summary_lines(report: Report) -> list[str]:
    """The summary of a comprehension run's report, one string per line."""
    comp: ComprehensionSection | None = report.comprehension
    if comp is None:
        return ["this run has no comprehension section (it is not a knowmeter comprehend run)"]
    run = report.run
    ex = run.executor
    skill, verdict = comp.skill, comp.verdict
    lines = [
        f"comprehension of {skill.name} ({skill.path}, {skill.shape}) · eval {comp.eval_file.path} "
        f"· {run.config.repeat} repeat(s) per case and arm × {run.config.judge_repeat} grader call(s) per answer",
        f"agent: {_party(ex.name, ex.model, ex.non_llm, 'offline agent')}",
        *(f"grader: {_party(g.name, g.model, g.non_llm, 'scripted grader')}" for g in comp.graders),
        f"grader prompt {comp.grader_prompt_hash} · arms: baseline (no skill) vs with-skill (SKILL.md)",
        "",
    ]
    decision = report.decision
    unmeasured = [b for b in decision.blockers if b.kind == "not_measured"] if decision is not None else []
    if decision is not None and unmeasured:  # no figure, verdict or case FAIL: they would grade the errors
        return [
            *lines,
            f"outcome: {decision.outcome} · exit code {decision.exit_code}",
            f"  {unmeasured[0].message}",
            "  no verdict, no eval_score: nothing about the skill was measured (the answers are errors, "
            "not the agent's understanding)",
            f"recommendation: {decision.recommendation}",
            *(f"  note: {n}" for n in comp.notes),
        ]
    lines += [
        f"{'dim':<4} {'name':<27} {'baseline':<20} {'with skill':<20} {'Δ pass':>7} {'McNemar p':>10} {'Holm':>6}",
    ]
    names = comp.dimension_names
    for dim, block in comp.dimensions.items():
        dp = block.paired
        diff = dp.difference_in_pass_rate
        lines.append(
            f"{dim:<4} {names[dim]:<27} {_rate(block.baseline):<20} {_rate(block.with_skill):<20} "
            f"{'—' if diff is None else format(diff, '+.2f'):>7} {_p(dp.mcnemar.p_value):>10} "
            f"{_p(dp.p_holm):>6}"
        )
    overall = comp.overall
    paired = overall.paired
    diff = paired.difference_in_pass_rate
    boot = paired.behavior_fraction_difference
    ci = (boot.bca or boot.percentile) if boot is not None and boot.estimate is not None else None
    lines += [
        f"{'all':<4} {'':<27} {_rate(overall.baseline):<20} {_rate(overall.with_skill):<20} "
        f"{'—' if diff is None else format(diff, '+.2f'):>7} {_p(paired.mcnemar.p_value):>10}",
        "behavior pass fraction, with-skill − baseline: "
        + (
            f"{boot.estimate:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}] (cluster bootstrap over cases, "
            f"B={boot.b}, seed {boot.seed})"
            if boot is not None and boot.estimate is not None and ci
            else "unknown"
        )
        + (f" · minimum detectable difference {paired.mde:.2f}" if paired.mde is not None else ""),
        "",
    ]
    if decision is not None and decision.blockers:  # the run's outcome is not the verdict's
        lines.append(f"outcome: {decision.headline} · exit code {decision.exit_code}")
    lines.append(f"verdict: {verdict.level} — {verdict.reasons[0]}")
    lines += [f"  caveat: {c}" for c in verdict.caveats if c not in verdict.reasons[:1]]
    exceptions = [
        f"failing {', '.join(verdict.failing_dimensions)}" if verdict.failing_dimensions else "",
        f"unverified {', '.join(verdict.unverified_dimensions)}" if verdict.unverified_dimensions else "",
        f"not covered {', '.join(verdict.not_covered_dimensions)}" if verdict.not_covered_dimensions else "",
    ]
    lines.append(f"  named exceptions: {'; '.join(e for e in exceptions if e) or 'none'}")
    score = verdict.eval_score
    lines.append(
        f"  eval_score {'unknown' if score is None else f'{score:g}/5'} · eval_failed_ids "
        f"[{', '.join(verdict.eval_failed_ids)}]"
    )
    for case in comp.cases:
        for g in case.with_skill:
            if g.graded and g.verdict == "FAIL":
                failed = [b.id + (f" ({b.override})" if b.override else "") for b in g.behaviors if b.verdict == "FAIL"]
                lines.append(
                    f"  case {case.case_id} ({case.dimension}) with skill, repeat {g.repeat}: "
                    f"FAIL — {', '.join(failed)}"
                )
    lines += [f"  ungraded: {u}" for u in comp.ungraded]
    lines += [f"  note: {n}" for n in comp.notes]
    if decision is not None and decision.blockers:
        lines.append(f"recommendation: {decision.recommendation}")
    return lines
