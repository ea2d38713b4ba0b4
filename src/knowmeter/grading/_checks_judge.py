"""Judge-backed assertions (fact layer): ``semantic_similarity`` and the RAG metrics
``faithfulness``, ``answer_relevancy`` and ``context_recall``.

Each asks every configured judge once (with one retry) using its own versioned prompt; the
metric's score is the mean of the judges that answered (1–5) and the assertion passes when it is
at least ``threshold`` (default 3). With no judge configured, or when every judge failed, or when
the sample lacks what the metric needs (a context), the assertion is *not evaluated*: its
``passed`` is None, the message says why, and it counts in no layer.
"""

from __future__ import annotations

import hashlib
import statistics
from abc import abstractmethod
from functools import partial
from typing import Any, ClassVar

from pydantic import AliasChoices, Field

from knowmeter.ask import CallSite
from knowmeter.grading._concurrency import gather
from knowmeter.grading._judge import call_judge
from knowmeter.grading._prompts import METRIC_TEMPLATES
from knowmeter.grading._registry import Assertion, CheckContext, Outcome, register


class _JudgeMetric(Assertion):
    threshold: float = Field(default=3, ge=1, le=5, validation_alias=AliasChoices("threshold", "value"))

    label: ClassVar[str]

    @abstractmethod
    def data(self, ctx: CheckContext) -> dict[str, str] | str:
        """The prompt's data blocks, or why the metric cannot be evaluated for this sample."""

    async def evaluate(self, ctx: CheckContext) -> Outcome:
        if not ctx.judges:
            return Outcome(None, "not evaluated: no judge configured")
        data = self.data(ctx)
        if isinstance(data, str):
            return Outcome(None, f"not evaluated: {data}")
        template = METRIC_TEMPLATES[self.type_name]
        prompt = template.render(data)
        site = CallSite(ctx.task_id, ctx.sample.sample_id, ctx.config.judge_timeout_s)
        purpose = f"{self.type_name}:{hashlib.sha256(prompt.encode()).hexdigest()[:8]}"
        calls = await gather(
            [partial(call_judge, j, template, prompt, site, purpose) for j in ctx.judges], ctx.config.judge_concurrency
        )
        costs = [c for call in calls for c in call.costs]
        details: dict[str, Any] = {
            "threshold": self.threshold,
            "prompt_hash": template.hash,
            "judges": [
                {
                    "judge": j.name,
                    "model": j.model,
                    "score": c.score,
                    "reason": c.reason or None,
                    "error": c.error,
                    "cost_usd": c.cost_usd,
                }
                for j, c in zip(ctx.judges, calls, strict=True)
            ],
        }
        scores = [c.score for c in calls if c.score is not None]
        if not scores:
            first_error = next(c.error for c in calls if c.error)
            return Outcome(None, f"not evaluated: the judge failed ({first_error})", details, costs)
        score = statistics.fmean(scores)
        details["score"] = score
        ok = score >= self.threshold
        message = f"{self.label} {score:.2f} ({'>=' if ok else '<'} {self.threshold:g})"
        return Outcome(ok, message, details, costs)


@register("semantic_similarity")
class SemanticSimilarity(_JudgeMetric):
    reference: str = Field(min_length=1)
    label = "semantic similarity"

    def data(self, ctx: CheckContext) -> dict[str, str] | str:
        return {"REFERENCE": self.reference, "ANSWER": ctx.output}


@register("faithfulness")
class Faithfulness(_JudgeMetric):
    label = "faithfulness"

    def data(self, ctx: CheckContext) -> dict[str, str] | str:
        if not ctx.sample.context:
            return "the sample has no context to check the answer against"
        return {"QUESTION": ctx.sample.prompt, "CONTEXT": ctx.sample.context, "ANSWER": ctx.output}


@register("answer_relevancy")
class AnswerRelevancy(_JudgeMetric):
    label = "answer relevancy"

    def data(self, ctx: CheckContext) -> dict[str, str] | str:
        return {"QUESTION": ctx.sample.prompt, "ANSWER": ctx.output}


@register("context_recall")
class ContextRecall(_JudgeMetric):
    """Share of the key facts of ``reference`` (default: the sample's context) the answer states."""

    reference: str | None = Field(default=None, min_length=1)
    label = "context recall"

    def data(self, ctx: CheckContext) -> dict[str, str] | str:
        reference = self.reference or ctx.sample.context
        if not reference:
            return "no reference given and the sample has no context"
        return {"QUESTION": ctx.sample.prompt, "REFERENCE": reference, "ANSWER": ctx.output}
