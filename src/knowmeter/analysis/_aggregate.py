"""Per-variant gap aggregates (spec §5) — always bound to their sample-set watermark (§7.1)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable
from typing import Literal

from knowmeter._record import Count, Record
from knowmeter.analysis._model import (
    ORDER,
    RETRIED_COMMAND,
    SOURCES,
    GapSignal,
    HedgingMode,
    SignalSource,
    TaskGaps,
)
from knowmeter.watermark import Watermark

Confidence = Literal["underpowered", "low", "high"]

#: ``gap_rate - weighted_gap_rate`` at or above this means soft signals carry a fair share.
SOFT_SIGNAL_THRESHOLD = 0.10
SOFT_SIGNAL_NOTE = (
    "Soft signals make up a fair share: gap_rate may be inflated by hedging / explicit markers — "
    "cross-check the weak signals against the gap inventory."
)


def confidence_tier(samples: int) -> Confidence:
    """Spec §5 guardrail: < 5 samples underpowered, < 20 low, else high."""
    if samples < 5:
        return "underpowered"
    return "low" if samples < 20 else "high"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GapSummary(Record):
    """One variant's gap aggregates over the executed tasks of a run, with the inventory.

    ``executed`` counts tasks (sample × repeat) that ran; ``failed_executions`` those that did
    not (outside the denominator). ``samples`` counts distinct executed sample ids and sets the
    confidence tier. Rates are None when nothing executed. ``hedging_mode`` is ``mixed`` when
    only some tasks went through the classifier. The watermark is required. ``retried`` lists
    the retried-command signals kept out of the rates (``signals_by_source`` has a
    ``retried_command`` entry only when some were counted)."""

    watermark: Watermark
    variant: str | None = None
    executed: Count
    failed_executions: Count
    samples: Count
    samples_with_gap: Count
    gap_rate: float | None
    weighted_gap_rate: float | None
    signals_by_source: dict[SignalSource, int]
    samples_by_source: dict[SignalSource, int]
    confidence: Confidence
    soft_signal_note: str | None = None
    hedging_mode: Literal["regex-only", "regex+llm", "mixed"]
    hedging_dropped: int = 0
    hedging_unjudged: int = 0
    excluded: dict[str, int] = dataclasses.field(default_factory=dict)
    signals: tuple[GapSignal, ...] = ()
    retried: tuple[GapSignal, ...] = ()

    def headline(self) -> str:
        """``gap rate 41.7% (5/12) · weighted 33.3% · confidence low``."""
        if self.gap_rate is None or self.weighted_gap_rate is None:
            return "gap rate n/a (no successfully executed task)"
        return (
            f"gap rate {self.gap_rate:.1%} ({self.samples_with_gap}/{self.executed}) · "
            f"weighted {self.weighted_gap_rate:.1%} · confidence {self.confidence}"
        )

    def lines(self) -> list[str]:
        """The headline followed by the watermark lines: the only way the rate is printed."""
        return [self.headline(), *self.watermark.lines()]


class GapTally:
    """``aggregate_gaps`` folded one task at a time: a task without signals leaves only counts
    (and its sample id) behind, so a large run's tally holds little more than its gaps. Tasks
    with signals are weighed in the order added (the weighted rate is a float sum): add them in
    the report's order; the others may come in any order."""

    def __init__(self) -> None:
        self.done = self._executed = 0
        self._samples: set[str] = set()  # of the tasks that executed
        self._modes: set[HedgingMode] = set()
        self._excluded: dict[str, int] = {}
        self._dropped = self._unjudged = self._with_gap = 0
        self._weights: list[float] = []  # the tasks with a gap's (no gap weighs 0.0: adds nothing)
        self._signals: list[GapSignal] = []
        self._retried: list[GapSignal] = []
        self._samples_by_source: dict[str, int] = {}

    def add(self, t: TaskGaps) -> None:
        """Count one task in."""
        self.done += 1
        if not t.ok:
            return
        self._executed += 1
        self._samples.add(sys.intern(t.sample_id))  # equal ids share one string
        self._modes.add(t.hedging_mode)
        for k, v in t.excluded.items():
            self._excluded[k] = self._excluded.get(k, 0) + v
        self._dropped += t.hedging_dropped
        self._unjudged += t.hedging_unjudged
        self._retried.extend(t.retried)
        if t.has_gap:
            self._with_gap += 1
            self._weights.append(t.max_weight)
            self._signals.extend(t.signals)
            for src in {s.source for s in t.signals}:
                self._samples_by_source[src] = self._samples_by_source.get(src, 0) + 1

    def summary(self, watermark: Watermark, *, variant: str | None = None) -> GapSummary:
        """The variant's aggregates over the tasks added."""
        n = self._executed
        signals = self._signals
        gap_rate = self._with_gap / n if n else None
        weighted = sum(self._weights) / n if n else None
        soft = gap_rate is not None and weighted is not None and round(gap_rate - weighted, 9) >= SOFT_SIGNAL_THRESHOLD
        modes = self._modes
        samples = len(self._samples)
        order = ORDER.index
        sources = SOURCES + ((RETRIED_COMMAND,) if any(s.source == RETRIED_COMMAND for s in signals) else ())
        return GapSummary(
            watermark=watermark,
            variant=variant,
            executed=n,
            failed_executions=self.done - n,
            samples=samples,
            samples_with_gap=self._with_gap,
            gap_rate=gap_rate,
            weighted_gap_rate=weighted,
            signals_by_source={src: sum(1 for s in signals if s.source == src) for src in sources},
            samples_by_source={src: self._samples_by_source.get(src, 0) for src in sources},
            confidence=confidence_tier(samples),
            soft_signal_note=SOFT_SIGNAL_NOTE if soft else None,
            hedging_mode="mixed" if len(modes) > 1 else next(iter(modes)) if modes else "regex-only",
            hedging_dropped=self._dropped,
            hedging_unjudged=self._unjudged,
            excluded=dict(sorted(self._excluded.items())),
            signals=tuple(sorted(signals, key=lambda s: (s.sample_id, s.repeat, s.turn, order(s.source)))),
            retried=tuple(sorted(self._retried, key=lambda s: (s.sample_id, s.repeat, s.turn))),
        )


def aggregate_gaps(tasks: Iterable[TaskGaps], watermark: Watermark, *, variant: str | None = None) -> GapSummary:
    """Aggregate one variant's per-task analyses into rates, counts and the inventory."""
    tally = GapTally()
    for t in tasks:
        tally.add(t)
    return tally.summary(watermark, variant=variant)
