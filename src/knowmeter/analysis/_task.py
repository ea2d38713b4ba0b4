"""Per-task gap analysis: all four signal sources of one trace."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Literal

from knowmeter.analysis._model import ORDER, TaskGaps
from knowmeter.analysis._paths import PathKeyer
from knowmeter.analysis._phrases import AgentText, hedging_scan, marker_signals
from knowmeter.analysis._retries import retry_signals
from knowmeter.analysis._searches import search_signals
from knowmeter.traces import Trace


def agent_texts(trace: Trace, fallback_output: str | None = None) -> list[AgentText]:
    """The agent's own words: assistant messages that the harness did not inject. When the
    trace has none (an executor that reports only its final answer), ``fallback_output``."""
    texts = [AgentText(m.text, m.turn) for m in trace.messages("assistant") if m.text.strip()]
    if not texts and fallback_output and fallback_output.strip():
        texts = [AgentText(fallback_output, trace.turns)]
    return texts


def analyze_task(
    trace: Trace,
    *,
    sample_id: str,
    prompt_text: str = "",
    ok: bool = True,
    repeat: int = 0,
    workspace_root: Path | str | None = None,
    output_text: str | None = None,
    hedging_recall: Literal["strict", "broad"] = "strict",
    count_retried_commands: bool = False,
) -> TaskGaps:
    """Gap signals of one task (spec §4), hedging regex-only (see ``HedgingClassifier.apply``).

    ``prompt_text`` is what the agent was given (prompt + context): a missing path that appears
    in it, or in a user message of the trace, is the user's, not a gap the agent constructed.
    ``workspace_root`` (and the trace's ``meta["cwd"]``) make paths comparable. A task whose
    execution failed (``ok=False``) gets no signals: it is outside the gap-rate denominator.
    ``hedging_recall="broad"`` widens the hedging net; use it only when the result goes through
    ``HedgingClassifier.apply`` (regex-only results should use the strict net, which judges
    no Japanese: its candidates are counted in ``hedging_unjudged``).
    ``count_retried_commands`` puts ``retried_command`` signals among the gap signals (they
    enter the gap rate); by default they are kept apart in ``TaskGaps.retried``."""
    if not ok:
        return TaskGaps(sample_id=sample_id, repeat=repeat, ok=False)
    cwd = trace.meta.get("cwd")
    keyer = PathKeyer(workspace_root, cwd if isinstance(cwd, str) and cwd else None)
    given = [prompt_text, *(m.text for m in trace.messages("user"))]
    invocations = trace.invocations()
    tool_signals, excluded = search_signals(trace, invocations, sample_id=sample_id, given=given, keyer=keyer)
    texts = agent_texts(trace, output_text)
    retried = retry_signals(invocations, sample_id=sample_id)
    hedges, unjudged = hedging_scan(texts, sample_id=sample_id, broad=hedging_recall == "broad")
    signals = [
        *tool_signals,
        *(retried if count_retried_commands else ()),
        *marker_signals(texts, sample_id=sample_id),
        *hedges,
    ]
    apart = () if count_retried_commands else tuple(retried)
    if repeat:
        signals = [replace(s, repeat=repeat) for s in signals]
        apart = tuple(replace(s, repeat=repeat) for s in apart)
    signals.sort(key=lambda s: (s.turn, ORDER.index(s.source)))
    return TaskGaps(
        sample_id=sample_id,
        repeat=repeat,
        ok=True,
        signals=tuple(signals),
        excluded=excluded,
        retried=apart,
        hedging_unjudged=unjudged,
    )
