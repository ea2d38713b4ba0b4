"""Calling judges: one call with one retry, repeats, rubric dimensions, and ensembles.

A judge call that fails (executor error, no JSON, a score outside 1–5) is retried once; if the
retry fails too, that call is a *failure* with its reason — it never becomes a score of 0. A
judge whose every call failed has no score, and a task whose every judge failed has no judge
layer (``judge_error`` says why).
"""

from __future__ import annotations

import statistics
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from knowmeter.executors._protocol import ExecRequest, ExecutorError
from knowmeter.grading._concurrency import gather
from knowmeter.grading._model import DimensionOutcome, GradingConfig, JudgeOutcome, JudgeSpec
from knowmeter.grading._prompts import PromptTemplate, judge_template
from knowmeter.grading._reply import parse_judge_reply
from knowmeter.samples._model import Sample

_MAX_ERROR_CHARS = 300

T = TypeVar("T")


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


def sum_costs(costs: Sequence[float | None]) -> float | None:
    """Sum of costs; None (unknown) when any is unknown."""
    if any(c is None for c in costs):
        return None
    return float(sum(c for c in costs if c is not None))


@dataclass(frozen=True, slots=True)
class CallSite:
    """Where a judge call comes from: ids for the request, the timeout."""

    task_id: str
    sample_id: str
    timeout_s: float | None


@dataclass(slots=True)
class Asked(Generic[T]):
    """One judge question after its re-ask: the parsed reply, or ``error`` (why not)."""

    value: T | None
    error: str | None
    costs: list[float | None]
    attempts: int


async def ask_judge(judge: JudgeSpec, system: str, prompt: str, site: CallSite, purpose: str,
                    parse: Callable[[str], T], *,
                    reask: Callable[[str, str], str] | None = None) -> Asked[T]:
    """Ask ``judge`` once and parse its reply with ``parse`` (a ``ValueError`` rejects it); a failed
    call or a rejected reply is asked once more — with ``reask(prompt, reason)`` as the prompt
    after a rejected reply, when given."""
    costs: list[float | None] = []
    error = ""
    for attempt in (1, 2):
        request = ExecRequest(task_id=f"{site.task_id}:judge:{judge.name}:{purpose}:a{attempt}",
                              sample_id=site.sample_id, prompt=prompt, system=system,
                              model=judge.model, timeout_s=site.timeout_s)
        try:
            result = await judge.executor.run(request)
        except ExecutorError as exc:
            costs.append(None)
            error = f"judge call failed: {exc}"
            continue
        costs.append(result.cost_usd)
        if result.error is not None:
            error = f"judge call failed: {result.error}"
            continue
        try:
            return Asked(parse(result.output), None, costs, attempt)
        except ValueError as exc:
            error = f"unusable judge reply: {exc}"
            if reask is not None:
                prompt = reask(prompt, str(exc))
    return Asked(None, f"{error[:_MAX_ERROR_CHARS]} (after 1 retry)", costs, 2)


async def call_judge(judge: JudgeSpec, template: PromptTemplate, prompt: str, site: CallSite,
                     purpose: str) -> CallResult:
    """Ask ``judge`` once, retrying once if the call or its reply fails."""
    asked = await ask_judge(judge, template.system, prompt, site, purpose, parse_judge_reply)
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
        judge=judge.name, model=judge.model, prompt_hash=prompt_hash, scores=scores, mean=mean, sd=sd,
        failures=len(calls) - len(scores), reasoning=first_ok.reasoning if first_ok else None,
        reason=first_ok.reason if first_ok else None, cost_usd=sum_costs([x for c in calls for x in c.costs]),
        error=_first_error(calls),
    )


def _dimension_outcome(judge: JudgeSpec, prompt_hash: str, names: list[str],
                       calls: Mapping[str, list[CallResult]], repeat: int) -> JudgeOutcome:
    dims: dict[str, DimensionOutcome] = {}
    for name in names:
        ok = [c for c in calls[name] if c.score is not None]
        mean, sd = _mean_sd([float(c.score) for c in ok if c.score is not None])
        dims[name] = DimensionOutcome(
            scores=[c.score for c in ok if c.score is not None], mean=mean, sd=sd,
            failures=len(calls[name]) - len(ok), reasoning=ok[0].reasoning if ok else None,
            reason=ok[0].reason if ok else None)
    # a repeat counts only if every dimension was scored in it: the construct stays the same
    scores = [
        statistics.fmean(float(calls[n][r].score or 0) for n in names)
        for r in range(repeat) if all(calls[n][r].score is not None for n in names)
    ]
    mean, sd = _mean_sd(scores)
    all_calls = [c for n in names for c in calls[n]]
    reason = "; ".join(f"{n}: {d.reason}" for n, d in dims.items() if d.reason)
    return JudgeOutcome(
        judge=judge.name, model=judge.model, prompt_hash=prompt_hash, scores=scores, mean=mean, sd=sd,
        failures=repeat - len(scores), reasoning=None, reason=reason or None, dimensions=dims,
        cost_usd=sum_costs([x for c in all_calls for x in c.costs]), error=_first_error(all_calls),
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


async def run_panel(judges: Sequence[JudgeSpec], sample: Sample, output: str, tool_summary: str,
                    config: GradingConfig, site: CallSite) -> PanelResult:
    """Every judge scores the answer (``judge_repeat`` times, per dimension when the sample has
    them); the judge layer is the mean of the judges that produced a score."""
    if not judges:
        return PanelResult([], None, None)
    rubrics = _rubrics(sample)
    if rubrics is None:
        return PanelResult([], None, "the sample has no rubric or dimensions, so no judge was asked")
    template = judge_template(config.length_debias)
    data = {"TASK": sample.prompt, "CONTEXT": sample.context or "", "ANSWER": output,
            "TOOL_USE": tool_summary}
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
