"""Grading one answer to one case: the verbatim check first, then every grader ``judge_repeat``
times (one re-ask each on a rejected reply), the verbatim override, and the verdicts computed in
code — per behavior by majority over the accepted gradings, the case PASSes iff every behavior
does. A case no grading was accepted for is *ungraded*, with the reasons, never passed or failed.

An answer that is not there — empty output, or the agent failed or timed out (``unanswered``) —
FAILs every behavior without asking a grader: no evidence is a FAIL (§8.9 "assumed
verification", RULE-9), it is the agent's outcome, not a grading gap."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from knowmeter.ask import Asked, CallSite, ask_json, sum_costs
from knowmeter.comprehension._case import GraderCase
from knowmeter.comprehension._prompt import GRADER_TEMPLATE, reask_prompt, render_grader_prompt
from knowmeter.comprehension._reply import BehaviorVerdict, GraderVerdict, parse_grader_reply
from knowmeter.grading import JudgeSpec, gather
from knowmeter.skillgraph import Overlap


def _forced(verdict: GraderVerdict, case: GraderCase, overlap: Overlap) -> GraderVerdict:
    """A failed verbatim check fails the case's verbatim behavior whatever the grader said."""
    if overlap.passed or case.verbatim_behavior is None:
        return verdict
    why = f"verbatim check failed: {len(overlap.ngrams)} shared {overlap.n}-gram(s), e.g. {overlap.ngrams[0]!r}"
    out = []
    for bv in verdict.behaviors:
        if bv.id == case.verbatim_behavior and bv.verdict == "PASS":
            bv = replace(bv, verdict="FAIL", override=why)
        elif bv.id == case.verbatim_behavior:
            bv = replace(bv, override=why)
        out.append(bv)
    return GraderVerdict(tuple(out), verdict.grader_dimension_verdict)


def _call_record(judge: str, repeat: int, asked: Asked[GraderVerdict]) -> dict[str, Any]:
    v = asked.value
    rec: dict[str, Any] = {
        "judge": judge,
        "repeat": repeat,
        "attempts": asked.attempts,
        "cost_usd": sum_costs(asked.costs),
        "error": asked.error,
    }
    if v is not None:
        rec["behavior_verdicts"] = [b.to_dict() for b in v.behaviors]
        rec["dimension_verdict"] = "PASS" if all(b.verdict == "PASS" for b in v.behaviors) else "FAIL"
        rec["grader_dimension_verdict"] = v.grader_dimension_verdict
    return rec


def _combine(case: GraderCase, verdicts: list[GraderVerdict]) -> list[dict[str, Any]]:
    """Per behavior: PASS when more than half the accepted gradings passed it (a tie FAILs)."""
    out = []
    for i, b in enumerate(case.behaviors):
        votes: list[BehaviorVerdict] = [v.behaviors[i] for v in verdicts]
        passes = sum(bv.verdict == "PASS" for bv in votes)
        final = "PASS" if 2 * passes > len(votes) else "FAIL"
        shown = (
            next(bv for bv in votes if bv.verdict == final) if any(bv.verdict == final for bv in votes) else votes[0]
        )
        out.append(
            {
                "id": b.id,
                "kind": b.kind,
                "derived": b.derived,
                "verdict": final,
                "passes": passes,
                "gradings": len(votes),
                "evidence_quote": shown.evidence_quote,
                "rationale": shown.rationale,
                "override": next((bv.override for bv in votes if bv.override), None),
                "review": next((bv.review for bv in votes if bv.review), None),
            }
        )
    return out


def _verdicts(combined: list[dict[str, Any]]) -> dict[str, Any]:
    """The graded part of a result: the behaviors' verdicts and the case's, computed from them."""
    passed = sum(b["verdict"] == "PASS" for b in combined)
    return {
        "graded": True,
        "ungraded_reason": None,
        "behavior_verdicts": combined,
        "behavior_pass_fraction": passed / len(combined),
        "verdict": "PASS" if passed == len(combined) else "FAIL",
        "review": [f"{b['id']}: {b['review']}" for b in combined if b["review"]],
    }


def unanswered(case: GraderCase, why: str) -> dict[str, Any]:
    """The stored result of an answer that is not there (``why``: the output is empty, the agent
    failed …): every behavior FAILs with the rationale ``no answer: <why>``; no grader is asked."""
    rationale = f"no answer: {why}"
    combined = [
        {
            "id": b.id,
            "kind": b.kind,
            "derived": b.derived,
            "verdict": "FAIL",
            "passes": 0,
            "gradings": 0,
            "evidence_quote": None,
            "rationale": rationale,
            "override": None,
            "review": None,
        }
        for b in case.behaviors
    ]
    return {**case.describe(), "overlap": None, "calls": [], "cost_usd": 0.0, **_verdicts(combined)}


async def grade_answer(
    case: GraderCase,
    answer: str,
    judges: Sequence[JudgeSpec],
    *,
    judge_repeat: int,
    site: CallSite,
    concurrency: int | None = None,
) -> dict[str, Any]:
    """Grade ``answer`` to ``case`` with every judge ``judge_repeat`` times; the stored result
    (an empty or blank answer is ``unanswered``: no judge is asked)."""
    if not answer.strip():
        return unanswered(case, "the output is empty")
    overlap = case.overlap(answer)
    prompt = render_grader_prompt(
        case_id=case.case_id,
        dimension=case.dimension,
        concept_name=case.concept_name,
        concept_text=case.concept_text,
        body=case.body,
        prompt=case.prompt,
        answer=answer,
        expected_reasoning=case.expected_reasoning,
        behaviors=case.behaviors,
        overlap=overlap,
    )
    parse = partial(parse_grader_reply, behaviors=case.behaviors, answer=answer)
    jobs = [(j, r) for j in judges for r in range(judge_repeat)]

    def thunk(judge: JudgeSpec, r: int) -> Callable[[], Awaitable[Asked[GraderVerdict]]]:
        return lambda: ask_json(
            judge.executor,
            judge.model,
            system=GRADER_TEMPLATE.system,
            prompt=prompt,
            parse=parse,
            site=site,
            purpose=f"judge:{judge.name}:comprehension:r{r}",
            reask=reask_prompt,
            what="judge",
        )

    asked = await gather([thunk(j, r) for j, r in jobs], concurrency)
    accepted = [_forced(a.value, case, overlap) for a in asked if a.value is not None]
    calls = [
        _call_record(j.name, r, replace(a, value=_forced(a.value, case, overlap)) if a.value else a)
        for (j, r), a in zip(jobs, asked, strict=True)
    ]
    result: dict[str, Any] = {
        **case.describe(),
        "prompt_hash": GRADER_TEMPLATE.hash,
        "overlap": overlap.to_dict(),
        "calls": calls,
        "cost_usd": sum_costs([c for a in asked for c in a.costs]),
    }
    if not accepted:
        reasons = "; ".join(f"{c['judge']} r{c['repeat']}: {c['error']}" for c in calls) or "no grader configured"
        return {
            **result,
            "graded": False,
            "ungraded_reason": reasons,
            "behavior_verdicts": [],
            "behavior_pass_fraction": None,
            "verdict": None,
            "review": [],
        }
    return {**result, **_verdicts(_combine(case, accepted))}
