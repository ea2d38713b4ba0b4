"""One request → one validated reply, with the one retry policy every structured model call uses.

A call that fails (executor error, an error result) or whose reply is rejected by ``parse``
(no JSON, wrong shape, a broken rule) is asked once more — after a rejected reply with
``reask(prompt, reason)`` as the prompt, when given. If the second attempt fails too, the result is
a *recorded failure* (``Asked.error`` says why, after how many attempts); callers never turn it
into a default value silently. Every attempt's cost is kept (None = not reported, never 0), so
callers add it to what they record; the run's ``Budget`` is charged by the executor they pass
(``runner.MeteredExecutor``). An optional cache holds accepted reply texts by key: a hit is parsed
again (a damaged entry is a miss) and costs nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from knowmeter.executors import ExecRequest, Executor, ExecutorError

T = TypeVar("T")

_MAX_ERROR_CHARS = 300

#: Accepted reply texts by cache key (in memory, or any mapping the caller keeps).
ReplyCache = MutableMapping[str, str]


@dataclass(frozen=True, slots=True)
class CallSite:
    """Where a model call comes from: the ids its requests carry, and the timeout."""

    task_id: str
    sample_id: str
    timeout_s: float | None = None


@dataclass(slots=True)
class Asked(Generic[T]):
    """One question after its re-ask: the validated reply, or ``error`` (why not). ``costs`` has one
    entry per call made (None when the executor did not report it); ``attempts`` is 0 for a cache hit."""

    value: T | None
    error: str | None
    costs: list[float | None] = field(default_factory=list)
    attempts: int = 0
    cached: bool = False

    @property
    def cost_usd(self) -> float | None:
        """What the calls cost; None (unknown) when any call did not report its cost."""
        return sum_costs(self.costs)


def sum_costs(costs: Sequence[float | None]) -> float | None:
    """Sum of costs; None (unknown) when any is unknown."""
    if any(c is None for c in costs):
        return None
    return float(sum(c for c in costs if c is not None))


def cache_key(executor: Executor, model: str | None, system: str | None, prompt: str) -> str:
    """The default cache key: sha256 of who is asked (executor identity, model) and what."""
    parts = (executor.identity(), model or "", system or "", prompt)
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def cached(cache: ReplyCache | None, key: str, parse: Callable[[str], T]) -> T | None:
    """The reply stored under ``key``, parsed; None on a miss (a damaged entry is a miss)."""
    text = cache.get(key) if cache is not None else None
    if not isinstance(text, str):
        return None
    try:
        return parse(text)
    except ValueError:  # a damaged entry of a persistent cache is a miss
        return None


def unusable_reply(what: str) -> str:
    """How an ``Asked.error`` starts when ``what``'s replies broke the rules (no usable JSON) twice,
    as opposed to a call that failed."""
    return f"unusable {what} reply"


async def ask_json(
    executor: Executor,
    model: str | None,
    *,
    system: str | None,
    prompt: str,
    parse: Callable[[str], T],
    site: CallSite,
    purpose: str,
    reask: Callable[[str, str], str] | None = None,
    cache: ReplyCache | None = None,
    key: str | None = None,
    what: str = "model",
) -> Asked[T]:
    """Ask ``executor`` (``model``) and validate its reply with ``parse`` (a ``ValueError`` rejects
    it), re-asking once on a failed call or a rejected reply. With ``cache``, an accepted reply is
    stored under ``key`` (default ``cache_key(...)``) and a stored one is used without a call.
    Request ids are ``<site.task_id>:<purpose>:a<attempt>``; ``what`` names the model in errors."""
    if cache is not None:
        key = key or cache_key(executor, model, system, prompt)
        hit = cached(cache, key, parse)
        if hit is not None:
            return Asked(hit, None, [], 0, cached=True)
    costs: list[float | None] = []
    error = ""
    for attempt in (1, 2):
        request = ExecRequest(
            task_id=f"{site.task_id}:{purpose}:a{attempt}",
            sample_id=site.sample_id,
            prompt=prompt,
            system=system,
            model=model,
            timeout_s=site.timeout_s,
        )
        try:
            result = await executor.run(request)
        except ExecutorError as exc:
            costs.append(None)
            error = f"{what} call failed: {exc}"
            continue
        costs.append(result.cost_usd)
        if result.error is not None:
            error = f"{what} call failed: {result.error}"
            continue
        try:
            value = parse(result.output)
        except ValueError as exc:
            error = f"{unusable_reply(what)}: {exc}"
            if reask is not None:
                prompt = reask(prompt, str(exc))
            continue
        if cache is not None and key is not None:
            cache[key] = result.output
        return Asked(value, None, costs, attempt)
    return Asked(None, f"{error[:_MAX_ERROR_CHARS]} (after 1 retry)", costs, 2)
