"""Calling judges: one call with one retry, repeats, rubric dimensions, and ensembles.

A judge call goes through ``knowmeter.ask.ask_json``: one that fails (executor error, no JSON, a
score outside 1–5) is retried once; if the retry fails too, that call is a *failure* with its
reason — it never becomes a score of 0. A judge whose every call failed has no score, and a task
whose every judge failed has no judge layer (``judge_error`` says why).
"""

from __future__ import annotations

import statistics
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from knowmeter.ask import CallSite, PromptTemplate, ask_json, sum_costs
from knowmeter.grading._concurrency import gather
from knowmeter.grading._model import DimensionOutcome, GradingConfig, JudgeOutcome, JudgeSpec
from knowmeter.grading._prompts import judge_template
from knowmeter.grading._reply import parse_judge_reply
from knowmeter.samples import Sample


@dataclass(slots=True)
class CallResult:
    """One judge call after its retry. ``score`` is None on failure (``error`` says why)."""

    score: int | None
    reasoning: str = ""
    reason: str = ""
    error: str | None = None
    costs: list[float | None] = field(default_factory=list)

    @property
    def cost_usd(self) -> float | None:
        return sum_costs(self.costs)


async def call_judge(
    judge: JudgeSpec, template: PromptTemplate, prompt: str, site: CallSite, purpose: str
) -> CallResult:
    """Ask ``judge`` once, retrying once if the call or its reply fails (``knowmeter.ask``)."""
    asked = await ask_json(
        judge.executor,
        judge.model,
        system=template.system,
        prompt=prompt,
        parse=parse_judge_reply,
        site=site,
        purpose=f"judge:{judge.name}:{purpose}",
        what="judge",
    )
    if asked.value is None:
        return CallResult(None, error=asked.error, costs=asked.costs)
    reply = asked.value
    return CallResult(reply.score, reply.reasoning, reply.reason, costs=asked.costs)


def _mean_sd(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else None)


def _first_error(calls: Sequence[CallResult]) -> str | None:
    return next((c.error for c in calls if c.error), None)


def _plain_outcome(judge: JudgeSpec, prompt_hash: str, calls: list[CallResult]) -> JudgeOutcome:
    scores = [float(c.score) for c in calls if c.score is not None]
    mean, sd = _mean_sd(scores)
    first_ok = next((c for c in calls if c.score is not None), None)
    return JudgeOutcome(
        judge=judge.name,
        model=judge.model,
        prompt_hash=prompt_hash,
        scores=scores,
        mean=mean,
        sd=sd,
        failures=len(calls) - len(scores),
        reasoning=first_ok.reasoning if first_ok else None,
        reason=first_ok.reason if first_ok else None,
        cost_usd=sum_costs([x for c in calls for x in c.costs]),
        error=_first_error(calls),
    )


def _dimension_outcome(
    judge: JudgeSpec, prompt_hash: str, names: list[str], calls: Mapping[str, list[CallResult]], repeat: int
) -> JudgeOutcome:
    dims: dict[str, DimensionOutcome] = {}
    for name in names:
        ok = [c for c in calls[name] if c.score is not None]
        mean, sd = _mean_sd([float(c.score) for c in ok if c.score is not None])
        dims[name] = DimensionOutcome(
            scores=[c.score for c in ok if c.score is not None],
            mean=mean,
            sd=sd,
            failures=len(calls[name]) - len(ok),
            reasoning=ok[0].reasoning if ok else None,
            reason=ok[0].reason if ok else None,
        )
    # a repeat counts only if every dimension was scored in it: the construct stays the same
    scores = [
        statistics.fmean(float(calls[n][r].score or 0) for n in names)
        for r in range(repeat)
        if all(calls[n][r].score is not None for n in names)
    ]
    mean, sd = _mean_sd(scores)
    all_calls = [c for n in names for c in calls[n]]
    reason = "; ".join(f"{n}: {d.reason}" for n, d in dims.items() if d.reason)
    return JudgeOutcome(
        judge=judge.name,
        model=judge.model,
        prompt_hash=prompt_hash,
        scores=scores,
        mean=mean,
        sd=sd,
        failures=repeat - len(scores),
        reasoning=None,
        reason=reason or None,
        dimensions=dims,
        cost_usd=sum_costs([x for c in all_calls for x in c.costs]),
        error=_first_error(all_calls),
    )


@dataclass(slots=True)
class PanelResult:
    """The judge layer of one task."""

    outcomes: list[JudgeOutcome]
    score: float | None
    error: str | None


def _rubrics(sample: Sample) -> dict[str, str] | None:
    """The rubric text per judge call: one per dimension, or the single rubric (key '')."""
    if sample.dimensions:
        overall = f"\nOverall expectation for the task: {sample.rubric}" if sample.rubric else ""
        return {name: f"Dimension “{name}”: {text}{overall}" for name, text in sample.dimensions.items()}
    if sample.rubric:
        return {"": sample.rubric}
    return None


async def run_panel(
    judges: Sequence[JudgeSpec], sample: Sample, output: str, tool_summary: str, config: GradingConfig, site: CallSite
) -> PanelResult:
    """Every judge scores the answer (``judge_repeat`` times, per dimension when the sample has
    them); the judge layer is the mean of the judges that produced a score."""
    if not judges:
        return PanelResult([], None, None)
    rubrics = _rubrics(sample)
    if rubrics is None:
        return PanelResult([], None, "the sample has no rubric or dimensions, so no judge was asked")
    template = judge_template(config.length_debias)
    data = {"TASK": sample.prompt, "CONTEXT": sample.context or "", "ANSWER": output, "TOOL_USE": tool_summary}
    prompts = {key: template.render(data, rubric=text) for key, text in rubrics.items()}
    jobs = [(ji, key, r) for ji in range(len(judges)) for key in rubrics for r in range(config.judge_repeat)]

    def thunk(ji: int, key: str, r: int) -> Callable[[], Awaitable[CallResult]]:
        purpose = f"rubric{':' + key if key else ''}:r{r}"
        return lambda: call_judge(judges[ji], template, prompts[key], site, purpose)

    results = await gather([thunk(*job) for job in jobs], config.judge_concurrency)
    by_job = dict(zip(jobs, results, strict=True))
    outcomes = []
    for ji, j in enumerate(judges):
        calls = {key: [by_job[(ji, key, r)] for r in range(config.judge_repeat)] for key in rubrics}
        if sample.dimensions:
            outcomes.append(_dimension_outcome(j, template.hash, list(rubrics), calls, config.judge_repeat))
        else:
            outcomes.append(_plain_outcome(j, template.hash, calls[""]))
    means = [o.mean for o in outcomes if o.mean is not None]
    if not means:
        detail = "; ".join(f"{o.judge}: {o.error}" for o in outcomes)
        return PanelResult(outcomes, None, f"every judge failed — {detail}")
    return PanelResult(outcomes, statistics.fmean(means), None)
