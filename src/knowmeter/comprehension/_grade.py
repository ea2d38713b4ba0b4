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

from knowmeter.ask import Asked, CallSite, ask_json, sum_costs
from knowmeter.comprehension._case import GraderCase
from knowmeter.comprehension._prompt import GRADER_TEMPLATE, reask_prompt, render_grader_prompt
from knowmeter.comprehension._reply import BehaviorVerdict, GraderVerdict, Verdict, parse_grader_reply
from knowmeter.grading import JudgeSpec, gather
from knowmeter.skillgraph import Overlap
from knowmeter.store import (
    BehaviorOutcome,
    CallBehavior,
    CaseBehavior,
    ComprehensionResult,
    GraderCall,
    OverlapRecord,
)


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


def _call_record(judge: str, repeat: int, asked: Asked[GraderVerdict]) -> GraderCall:
    v = asked.value
    cost = sum_costs(asked.costs)
    if v is None:
        return GraderCall(judge=judge, repeat=repeat, attempts=asked.attempts, cost_usd=cost, error=asked.error)
    return GraderCall(
        judge=judge,
        repeat=repeat,
        attempts=asked.attempts,
        cost_usd=cost,
        error=asked.error,
        behavior_verdicts=[
            CallBehavior(
                id=b.id,
                verdict=b.verdict,
                evidence_quote=b.evidence_quote,
                rationale=b.rationale,
                review=b.review,
                override=b.override,
            )
            for b in v.behaviors
        ],
        dimension_verdict="PASS" if all(b.verdict == "PASS" for b in v.behaviors) else "FAIL",
        grader_dimension_verdict=v.grader_dimension_verdict,
    )


def _combine(case: GraderCase, verdicts: list[GraderVerdict]) -> list[BehaviorOutcome]:
    """Per behavior: PASS when more than half the accepted gradings passed it (a tie FAILs)."""
    out = []
    for i, b in enumerate(case.behaviors):
        votes: list[BehaviorVerdict] = [v.behaviors[i] for v in verdicts]
        passes = sum(bv.verdict == "PASS" for bv in votes)
        final: Verdict = "PASS" if 2 * passes > len(votes) else "FAIL"
        shown = next((bv for bv in votes if bv.verdict == final), votes[0])
        out.append(
            BehaviorOutcome(
                id=b.id,
                kind=b.kind,
                derived=b.derived,
                verdict=final,
                passes=passes,
                gradings=len(votes),
                evidence_quote=shown.evidence_quote,
                rationale=shown.rationale,
                override=next((bv.override for bv in votes if bv.override), None),
                review=next((bv.review for bv in votes if bv.review), None),
            )
        )
    return out


def _result(
    case: GraderCase,
    *,
    overlap: Overlap | None,
    calls: list[GraderCall],
    cost_usd: float | None,
    combined: list[BehaviorOutcome] | None,
    ungraded_reason: str | None = None,
    prompt_hash: str | None = None,
) -> ComprehensionResult:
    """The stored result: the case, the verbatim check, the calls and the verdicts computed from
    the behaviors' (``combined`` None: ungraded, ``ungraded_reason`` says why)."""
    passed = sum(b.verdict == "PASS" for b in combined or [])
    return ComprehensionResult(
        case_id=case.case_id,
        dimension=case.dimension,
        concept_field=case.concept_name,
        transfer=case.transfer,
        behaviors=[
            CaseBehavior(id=b.id, kind=b.kind, description=b.description, derived=b.derived) for b in case.behaviors
        ],
        derived_behaviors=[b.id for b in case.behaviors if b.derived],
        verbatim_behavior=case.verbatim_behavior,
        application=case.application,
        prompt_hash=prompt_hash,
        overlap=None
        if overlap is None
        else OverlapRecord(passed=overlap.passed, n=overlap.n, overlap_ngrams=list(overlap.ngrams)),
        calls=calls,
        cost_usd=cost_usd,
        graded=combined is not None,
        ungraded_reason=ungraded_reason,
        behavior_verdicts=combined or [],
        behavior_pass_fraction=None if combined is None else passed / len(combined),
        verdict=None if combined is None else "PASS" if passed == len(combined) else "FAIL",
        review=[f"{b.id}: {b.review}" for b in combined or [] if b.review],
    )


def unanswered(case: GraderCase, why: str) -> ComprehensionResult:
    """The stored result of an answer that is not there (``why``: the output is empty, the agent
    failed …): every behavior FAILs with the rationale ``no answer: <why>``; no grader is asked."""
    rationale = f"no answer: {why}"
    combined = [
        BehaviorOutcome(
            id=b.id,
            kind=b.kind,
            derived=b.derived,
            verdict="FAIL",
            passes=0,
            gradings=0,
            evidence_quote=None,
            rationale=rationale,
            override=None,
            review=None,
        )
        for b in case.behaviors
    ]
    return _result(case, overlap=None, calls=[], cost_usd=0.0, combined=combined)


async def grade_answer(
    case: GraderCase,
    answer: str,
    judges: Sequence[JudgeSpec],
    *,
    judge_repeat: int,
    site: CallSite,
    concurrency: int | None = None,
) -> ComprehensionResult:
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
    cost = sum_costs([c for a in asked for c in a.costs])
    if not accepted:
        reasons = "; ".join(f"{c.judge} r{c.repeat}: {c.error}" for c in calls) or "no grader configured"
        return _result(
            case,
            overlap=overlap,
            calls=calls,
            cost_usd=cost,
            combined=None,
            ungraded_reason=reasons,
            prompt_hash=GRADER_TEMPLATE.hash,
        )
    return _result(
        case,
        overlap=overlap,
        calls=calls,
        cost_usd=cost,
        combined=_combine(case, accepted),
        prompt_hash=GRADER_TEMPLATE.hash,
    )
