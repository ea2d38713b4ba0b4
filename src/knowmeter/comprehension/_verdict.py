"""The skill's comprehension verdict, in Skill Graph's vocabulary, strict with named exceptions
(research §5.11): the skill passes only when the with-skill agent passes every dimension, and the
verdict always names the dimensions that fail, were not covered, or could not be graded.

Rules, first match wins (``rule`` in the result names it):

1. ``UNVERIFIED`` — no case was graded in the with-skill arm, or none in both arms.
2. ``SHALLOW`` — the with-skill agent fails at least one case: the dimensions it fails are named
   (a verbatim copy, the retrieval-not-understanding failure, fails C1 this way). Strict (§5.11):
   this holds even when the baseline passes every case — a skill that makes the agent fail where
   it passed without it is not excused as "nothing to show".
3. ``UNVERIFIED`` (rule ``ungraded``) — the grader failed on some answers (its reply broke the
   rules twice, its call failed or the budget refused it): a pass would rest on answers nobody
   graded (RULE-9), so the skill is not passed; the same command re-grades them (the agent's
   answers are cached). An answer that is not there is no grader failure: it FAILs (``_grade``).
4. ``SKIPPED_BASELINE_HIGH`` — both arms pass every graded case, so the eval cannot show what the
   skill teaches.
5. The with-skill agent passes every graded case:
   - the paired difference is significant (overall McNemar p < alpha) → ``PASS``, or
     ``PROVISIONAL`` — Skill Graph's "real result of lower confidence than PASS" — when a caveat
     holds: one grader model (Skill Graph's PASS is confirmed by two independent graders),
     grader and agent of the same model family, a graded dimension missing from the eval (C1–C9
     not all covered), verdicts flagged for review, a non-LLM agent or grader;
   - not significant and powered (see ``_stats``) → ``REDUNDANT``: loading the skill changes no
     measurable outcome;
   - not significant and underpowered → ``UNVERIFIED`` (rule ``cannot_tell``): the run cannot
     tell the skill from the baseline, so nothing is verified — not a pass.

``NA`` (Skill Graph: the skill has no comprehension eval file) is never a run's verdict: a skill
without an eval file is not run (``comprehend`` says so, and ``--write-state`` records ``NA``).
Exit codes: 0 for ``PASS`` and ``PROVISIONAL``; 2 for ``UNVERIFIED`` by grader replies that broke
the rules twice; else 1.

``eval_score`` = 5 × the with-skill case pass rate, to two decimals (Skill Graph's continuous
0.0–5.0 scale; None when nothing was graded or answers were left ungraded);
``eval_failed_ids`` = the with-skill arm's failed case ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from knowmeter.exit_codes import EXIT_INPUT, EXIT_NOT_PASSED, EXIT_OK

ALL_DIMENSIONS = tuple(f"C{i}" for i in range(1, 10))
#: verdicts a ``comprehend`` run passes with (exit code 0 when the run is complete)
PASSING = ("PASS", "PROVISIONAL")
LEVELS = ("PASS", "PROVISIONAL", "SHALLOW", "REDUNDANT", "SKIPPED_BASELINE_HIGH", "UNVERIFIED", "NA")

_FAMILIES = (
    ("anthropic", re.compile(r"claude|anthropic|opus|sonnet|haiku")),
    ("openai", re.compile(r"\bgpt|openai|codex|\bo[134](-|\b)")),
    ("google", re.compile(r"gemini|gemma|palm")),
    ("meta", re.compile(r"llama")),
    ("mistral", re.compile(r"mistral|mixtral|codestral")),
    ("alibaba", re.compile(r"qwen")),
    ("deepseek", re.compile(r"deepseek")),
)


def model_family(executor: str, model: str | None) -> str | None:
    """The vendor family of ``model`` (else of the executor's name), or None when unknown."""
    for text in (model or "", executor):
        low = text.lower()
        for family, pattern in _FAMILIES:
            if pattern.search(low):
                return family
    return None


@dataclass(frozen=True, slots=True)
class Parties:
    """Who answered and who graded: executor names, models, and whether each is an LLM."""

    agent: str
    agent_model: str | None
    agent_llm: bool
    graders: tuple[tuple[str, str | None, bool], ...]  # (executor, model, is an LLM)


def _caveats(stats: dict[str, Any], parties: Parties, reviews: int, covered: list[str]) -> list[str]:
    out = []
    agent_family = model_family(parties.agent, parties.agent_model) if parties.agent_llm else None
    for name, model, llm in parties.graders:
        family = model_family(name, model) if llm else None
        if agent_family is not None and family == agent_family:
            out.append(
                f"grader {name}{':' + model if model else ''} and the agent are of the same model family "
                f"({family}): self-preference bias is not excluded"
            )
        if not llm:
            out.append(f"grader {name} is not an LLM (a deterministic scripted grader)")
    if not parties.agent_llm:
        out.append(f"the agent {parties.agent} is not an LLM (a deterministic offline agent)")
    llm_graders = {(name, model) for name, model, llm in parties.graders if llm}
    if len(llm_graders) == 1:
        out.append("one grader: Skill Graph's PASS is confirmed by two independent graders (add a second --judge)")
    missing = [d for d in ALL_DIMENSIONS if d not in covered]
    if missing:
        out.append(f"dimensions not covered by the eval: {', '.join(missing)}")
    not_run = [d for d in covered if d not in stats["dimensions"]]
    if not_run:
        out.append(f"dimensions of the eval with no answer stored (the run is incomplete): {', '.join(not_run)}")
    ungraded = stats["overall"]["with_skill"]["ungraded"] + stats["overall"]["baseline"]["ungraded"]
    if ungraded:
        out.append(f"{ungraded} grading(s) ungraded (see the cases)")
    if reviews:
        out.append(f"{reviews} behavior verdict(s) flagged for review (hedged PASS)")
    return out


def skill_verdict(
    stats: dict[str, Any],
    parties: Parties,
    *,
    reviews: int = 0,
    broken_replies: int = 0,
    eval_dimensions: list[str] | None = None,
    flags: list[str] | None = None,
) -> dict[str, Any]:
    """The verdict block of the report (see the module doc for the rules). ``broken_replies``:
    gradings left ungraded because the grader's reply broke the rules twice — bad input (exit 2).
    ``eval_dimensions``: the dimensions the eval file has cases for (default: those with stored
    answers); one with none stored is unverified, not "not covered by the eval". ``flags``: caveats
    the run carries from before it started (a grader calibration that missed) — a run with one
    cannot PASS."""
    overall = stats["overall"]
    skill, base, paired = overall["with_skill"], overall["baseline"], overall["paired"]
    dims = stats["dimensions"]
    failing = [d for d, b in dims.items() if b["with_skill"]["cases_passed"] < b["with_skill"]["cases_graded"]]
    covered = list(dims) if eval_dimensions is None else sorted({*eval_dimensions, *dims}, key=lambda d: int(d[1:]))
    unverified = [d for d in covered if d not in dims or dims[d]["with_skill"]["cases_graded"] == 0]
    not_covered = [d for d in ALL_DIMENSIONS if d not in covered]
    caveats = [*(flags or []), *_caveats(stats, parties, reviews, covered)]
    ungraded = skill["ungraded"] + base["ungraded"]
    if skill["cases_graded"] == 0 or paired["cases_paired"] == 0:
        level, rule = "UNVERIFIED", "nothing_graded"
        reasons = ["no case was graded in " + ("the with-skill arm" if skill["cases_graded"] == 0 else "both arms")]
    elif failing:
        level, rule = "SHALLOW", "dimension_fails"
        reasons = [
            f"with the skill the agent fails {len(failing)} of {len(covered) - len(unverified)} graded "
            f"dimension(s): {', '.join(failing)}",
            *(
                f"{d}: {dims[d]['with_skill']['cases_passed']}/{dims[d]['with_skill']['cases_graded']} case(s) "
                "pass with the skill"
                for d in failing
            ),
        ]
    elif ungraded:
        level, rule = "UNVERIFIED", "ungraded"
        reasons = [
            f"{ungraded} answer(s) left ungraded: the grader failed on them (see the cases); run the same "
            "command again to re-grade them (the agent's answers are cached)"
        ]
    elif base["cases_graded"] and base["cases_passed"] == base["cases_graded"]:
        level, rule = "SKIPPED_BASELINE_HIGH", "baseline_passes"
        reasons = [f"without the skill the agent already passes all {base['cases_graded']} graded case(s)"]
    else:
        p = paired["mcnemar"]["p_value"]
        significant = p is not None and p < stats["settings"]["alpha"] and (paired["difference_in_pass_rate"] or 0) > 0
        if significant:
            level, rule = ("PROVISIONAL", "caveat") if caveats else ("PASS", "all_pass_and_better")
            reasons = [
                f"with the skill every graded case passes and the paired difference is significant "
                f"(McNemar p = {p:.3g})",
                *caveats,
            ]
        elif paired["underpowered"]:  # no verified result: not a pass of lower confidence (Skill Graph's PROVISIONAL)
            level, rule = "UNVERIFIED", "cannot_tell"
            reasons = [
                "with the skill every graded case passes, but the run cannot tell it from the baseline: "
                + "; ".join(paired["underpowered_reasons"])
                + " — add cases (or repeats) until it can",
                *caveats,
            ]
        else:
            level, rule = "REDUNDANT", "no_difference"
            reasons = [
                f"with the skill every graded case passes but no better than without it (McNemar p = "
                f"{p if p is None else format(p, '.3g')}, minimum detectable difference {paired['mde']:.2f})",
                *caveats,
            ]
    passed, graded = skill["cases_passed"], skill["cases_graded"]
    return {
        "level": level,
        "rule": rule,
        "reasons": reasons,
        "caveats": caveats,
        "headline": f"{level} · {reasons[0]}",
        "exit_code": EXIT_OK
        if level in PASSING
        else EXIT_INPUT
        if level == "UNVERIFIED" and broken_replies
        else EXIT_NOT_PASSED,
        "failing_dimensions": failing,
        "unverified_dimensions": unverified,
        "not_covered_dimensions": not_covered,
        "passing_dimensions": [d for d in dims if d not in failing and d not in unverified],
        # Skill Graph's continuous 0.0–5.0 scale: 9 of 10 cases is 4.5, not a rounded 5
        # (measured, so kept, when the run only cannot tell the skill from the baseline)
        "eval_score": None if rule in ("nothing_graded", "ungraded") or not graded else round(5 * passed / graded, 2),
        "eval_failed_ids": skill["failed_cases"],
    }
