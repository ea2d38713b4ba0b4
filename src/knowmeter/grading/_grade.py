"""Grading one task: assertions → fact / behavior layers, judges → judge layer, composite."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

import anyio

from knowmeter.ask import CallSite, sum_costs
from knowmeter.executors import ExecResult
from knowmeter.grading._concurrency import gather
from knowmeter.grading._judge import PanelResult, run_panel
from knowmeter.grading._layers import assertion_layer_score, composite_score
from knowmeter.grading._model import Grade, GradingConfig, JudgeSpec, Layers, OutputCut
from knowmeter.grading._prompts import tool_use_summary
from knowmeter.grading._registry import Assertion, CheckContext, Evaluated, run_assertion
from knowmeter.samples import Sample


async def grade(
    sample: Sample,
    result: ExecResult,
    *,
    assertions: Sequence[Assertion],
    judges: Sequence[JudgeSpec],
    config: GradingConfig | None = None,
    task_id: str | None = None,
) -> Grade:
    """Grade one task's result. ``assertions`` come from ``load_assertions`` (the sample's);
    ``judges`` may be empty (then the judge layer is absent and judge-backed assertions are not
    evaluated). ``task_id`` prefixes the judge requests' ids (default: the sample id)."""
    config = config or GradingConfig()
    tid = task_id or sample.sample_id
    result, cut = bounded_output(result, config.max_output_chars)
    ctx = CheckContext(sample, result, tuple(judges), config, tid)
    site = CallSite(tid, sample.sample_id, config.judge_timeout_s)
    evaluated: list[Evaluated] = []
    panel = PanelResult([], None, None)

    async def check_all() -> None:
        evaluated.extend(await gather([partial(run_assertion, a, ctx) for a in assertions]))

    async def judge_all() -> None:
        nonlocal panel
        summary = tool_use_summary(result.trace, result.num_turns)
        panel = await run_panel(judges, sample, result.output, summary, config, site)

    if judges:
        async with anyio.create_task_group() as tg:
            tg.start_soon(check_all)
            tg.start_soon(judge_all)
    else:  # no judge: no panel, and nothing to overlap with the checks
        await check_all()

    results = [e.result for e in evaluated]
    triples = [(r.layer, r.weight, r.passed) for r in results]
    layers = Layers(
        fact=assertion_layer_score(triples, "fact"),
        behavior=assertion_layer_score(triples, "behavior"),
        judge=panel.score,
    )
    composite, used = composite_score(layers.model_dump())
    verdicts = [r.passed for r in results if r.passed is not None]
    costs = [c for e in evaluated for c in e.judge_costs] + [o.cost_usd for o in panel.outcomes]
    return Grade(
        assertions=results,
        layers=layers,
        composite=composite,
        layers_used=used,
        passed=all(verdicts) if verdicts else None,
        judges=panel.outcomes,
        judge_error=panel.error,
        judge_cost_usd=sum_costs(costs),
        output_truncated=cut,
    )


def bounded_output(result: ExecResult, limit: int) -> tuple[ExecResult, OutputCut | None]:
    """``result`` with its output cut to its first ``limit`` characters for grading and judging
    (the stored result keeps it whole), and what was cut (None when nothing was)."""
    if len(result.output) <= limit:
        return result, None
    return replace(result, output=result.output[:limit]), OutputCut(length=len(result.output), graded=limit)
