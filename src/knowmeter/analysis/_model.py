"""Gap-signal data model: one signal, one task's signals, the classifier's verdict.

Everything here is a frozen ``Record`` so per-task analysis can be stored in each
``results.jsonl`` line (``to_dict``) and read back, checked (``from_dict``), by ``knowmeter report``.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

from knowmeter._record import AtLeast, AtMost, Record

SignalSource = Literal["failed_search", "explicit_marker", "hedging", "repeated_failure", "retried_command"]

#: The four sources of gap-signal spec §4, in the order reports list them.
SOURCES: tuple[SignalSource, ...] = ("failed_search", "explicit_marker", "hedging", "repeated_failure")

#: Not a spec source: the same non-search command (a test run, a commit) failing in 3+ turns.
#: Reported beside the gap signals; it enters the gap rate only when the user asks
#: (``analyze_task(count_retried_commands=True)``, ``knowmeter observe --count-retried-commands``).
RETRIED_COMMAND: SignalSource = "retried_command"

#: Every source in the order reports list them.
ORDER: tuple[SignalSource, ...] = (*SOURCES, RETRIED_COMMAND)

#: Spec §5 weights: hard tool-level evidence 1.0, the agent's own words 0.5. A retried command
#: (when counted) is 0.5: a failing test loop is indirect evidence, not a missed lookup.
SIGNAL_WEIGHTS: dict[SignalSource, float] = {
    "failed_search": 1.0,
    "repeated_failure": 1.0,
    "explicit_marker": 0.5,
    "hedging": 0.5,
    "retried_command": 0.5,
}

#: How a task's hedging signals were decided: regex recall only, or regex recall + LLM second pass.
HedgingMode = Literal["regex-only", "regex+llm"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HedgingVerdict(Record):
    """The classifier's decision on one hedging candidate (spec §4.3 ``HedgingVerdict``).

    ``origin`` says where it came from: a model call, the cache, or a conservative fallback
    (the call failed / was unparseable, or the candidate was over the per-evaluation cap) —
    fallbacks always keep the candidate (``is_uncertainty=True``)."""

    is_uncertainty: bool
    confidence: Annotated[float, AtLeast(0.0), AtMost(1.0)]
    reason: str = ""
    origin: Literal["llm", "cache", "fallback-error", "fallback-cap"] = "llm"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GapSignal(Record):
    """One knowledge-gap signal found in one task's trace.

    ``target`` is what the agent looked for (a grep pattern, a path, a command) or, for text
    signals, the marker / hedging phrase matched; ``context`` is a short human-readable line
    (for text signals: the sentence). ``occurrences`` counts the similar consecutive failed
    searches collapsed into this one event. ``note`` is the agent's next sentence after a failed
    search; ``window`` the sentences around a hedging match (what the classifier sees).
    ``calls`` are the ids of the tool calls behind a tool-level signal (the collapsed failures,
    the failed calls of a repeated failure or retried command)."""

    sample_id: str
    repeat: int = 0
    turn: int = 0
    source: SignalSource
    weight: float = -1.0
    tool: str | None = None
    target: str = ""
    context: str = ""
    occurrences: Annotated[int, AtLeast(1)] = 1
    note: str | None = None
    window: str | None = None
    classifier_verdict: HedgingVerdict | None = None
    calls: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        expected = SIGNAL_WEIGHTS[self.source]
        if self.weight == -1.0:
            object.__setattr__(self, "weight", expected)
        elif self.weight != expected:
            raise ValueError(f"weight of a {self.source} signal is {expected}, not {self.weight}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TaskGaps(Record):
    """The gap analysis of one task (one sample × variant × repeat).

    ``ok`` is False when the execution itself failed: such a task has no signals and is left out
    of the gap-rate denominator (counted separately). ``excluded`` counts tool failures that were
    deliberately *not* gaps, by reason (``permission_denied``, ``command_missing``, ``given_path``
    …). ``hedging_dropped`` counts regex candidates the classifier judged not uncertain.
    ``hedging_unjudged`` counts sentences in a language the regex alone does not judge
    (Japanese) that a classifier would have been asked about; they are no signals.
    ``retried`` holds the ``retried_command`` signals that were *not* counted as gaps (shown
    beside them; counted ones are in ``signals``)."""

    sample_id: str
    repeat: int = 0
    ok: bool = True
    signals: tuple[GapSignal, ...] = ()
    hedging_mode: HedgingMode = "regex-only"
    hedging_dropped: int = 0
    excluded: dict[str, int] = dataclasses.field(default_factory=dict)
    retried: tuple[GapSignal, ...] = ()
    hedging_unjudged: int = 0

    @property
    def has_gap(self) -> bool:
        return bool(self.signals)

    @property
    def max_weight(self) -> float:
        """The sample weight of spec §5: the strongest signal's weight, 0 without signals."""
        return max((s.weight for s in self.signals), default=0.0)
