"""The report's knowledge-gap and coverage section, per variant, always with the watermark."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowmeter._record import RecordError
from knowmeter.analysis import (
    Coverage,
    GapSignal,
    GapSummary,
    GapTally,
    HedgingVerdict,
    TaskGaps,
    coverage,
    knowledge_files,
)
from knowmeter.report._fold import First, Ordered, SectionBuilder, Shared, TaskKey
from knowmeter.report._model import CoverageSection, GapsSection
from knowmeter.store import GapsRecord, RunRecord, RunVariant, SignalRecord, TaskRecord, TraceMetaRecord

#: artifact deliveries that put the artifact into every request (a ``skill`` is loaded only when invoked)
IN_CONTEXT_DELIVERIES = frozenset({"system_prompt", "agents_md"})


def variant_root(run: RunRecord, variant: RunVariant) -> Path:
    """The working directory a variant's agent ran in (its cwd, else the config's folder)."""
    return Path(variant.cwd) if variant.cwd else Path(run.config.base_dir)


@dataclass
class _VariantTasks:
    """What the section needs of one variant's tasks (folded in, in any order)."""

    tally: GapTally = field(default_factory=GapTally)
    gapped: Ordered[TaskGaps] = field(default_factory=Ordered)  # tallied last, in the report's order
    accesses: list[dict[str, int]] = field(default_factory=list)  # coverage sums them: any order
    shared: Shared = field(default_factory=Shared)
    tasks: int = 0
    all_in_context: bool = True
    skill_folder: First = field(default_factory=First)
    memory: set[str] | None = None  # memory files delivered in every task so far

    def add(self, key: TaskKey, task: TaskRecord, variant: RunVariant) -> None:
        analysis = task.analysis
        if analysis is not None and analysis.gaps:
            gaps = _task_gaps(task, analysis.gaps)
            if gaps.has_gap and gaps.ok:
                self.gapped.add(key, gaps)
            else:  # what is kept of it does not depend on order
                self.tally.add(gaps)
        if analysis is not None and analysis.access is not None:
            access = analysis.access
            self.accesses.append(self.shared.one(tuple(access.items()), access))  # equal counts share one
        meta = task.exec.trace.known if task.exec.trace is not None else None
        self.tasks += 1
        self.all_in_context = self.all_in_context and _artifact_delivery(meta, variant) in IN_CONTEXT_DELIVERIES
        if meta is not None and meta.skill_folder is not None:
            self.skill_folder.add(key, "", meta.skill_folder)
        delivered = set((meta.memory_delivered if meta is not None else None) or ())
        self.memory = delivered if self.memory is None else self.memory & delivered


class _Gaps:
    """``gaps``: per-variant gap rate, weighted gap rate, inventory; ``coverage``: per-variant
    knowledge-file coverage. Both carry the sample-set watermark."""

    def __init__(self, run: RunRecord) -> None:
        self._run = run
        self._by_name = {v.name: v for v in run.variants}
        self._acc = {name: _VariantTasks() for name in self._by_name}

    def add(self, key: TaskKey, task: TaskRecord) -> None:
        if task.variant in self._acc:
            self._acc[task.variant].add(key, task, self._by_name[task.variant])

    def result(self) -> dict[str, Any]:
        run = self._run
        watermark = run.watermark
        cfg = run.config
        base = Path(cfg.base_dir)
        gap_rows: list[GapSummary] = []
        coverage_rows: list[Coverage] = []
        for v in run.variants:
            mine = self._acc.pop(v.name)  # freed once its rows are made
            files = knowledge_files(
                variant_root(run, v),
                artifact=v.path,
                knowledge_dirs=[(base / d).resolve() for d in cfg.knowledge_dirs],
                # the name the artifact was installed (and is invoked) under, else the variant's name
                skill_name=None if v.kind == "baseline" else mine.skill_folder.first() or v.name,
                artifact_in_context=bool(mine.tasks) and mine.all_in_context,
            )
            for gaps in mine.gapped:
                mine.tally.add(gaps)
            gap_rows.append(mine.tally.summary(watermark, variant=v.name))
            coverage_rows.append(
                coverage(files, mine.accesses, watermark, variant=v.name, injected=mine.memory or set())
            )
        return {
            "gaps": GapsSection(watermark=watermark, variants=gap_rows),
            "coverage": CoverageSection(watermark=watermark, variants=coverage_rows),
        }


#: The gaps and coverage section (a ``SectionBuilder``).
gaps_section: SectionBuilder = _Gaps


def _artifact_delivery(meta: TraceMetaRecord | None, variant: RunVariant) -> str | None:
    """How the task's executor delivered the artifact, as it reported; executors that report
    nothing (offline, script, model APIs) pass it as the system text."""
    if meta is not None and "artifact_delivery" in meta.model_fields_set:
        return meta.artifact_delivery
    return None if variant.kind == "baseline" else "system_prompt"


def _task_gaps(task: TaskRecord, gaps: GapsRecord) -> TaskGaps:
    """The stored gap analysis as ``TaskGaps`` (its types and bounds were checked when the record
    was read; a signal's weight that is not its source's is one line naming the task)."""
    try:
        return TaskGaps(
            sample_id=gaps["sample_id"],
            repeat=gaps.get("repeat", 0),
            ok=gaps.get("ok", True),
            signals=tuple(_signal(s) for s in gaps.get("signals", ())),
            hedging_mode=gaps.get("hedging_mode", "regex-only"),
            hedging_dropped=gaps.get("hedging_dropped", 0),
            excluded=gaps.get("excluded", {}),
            retried=tuple(_signal(s) for s in gaps.get("retried", ())),
            hedging_unjudged=gaps.get("hedging_unjudged", 0),
        )
    except ValueError as exc:
        raise RecordError(f"task {task.task_id!r}: analysis.gaps: {exc}") from None


def _signal(s: SignalRecord) -> GapSignal:
    v = s.get("classifier_verdict")
    return GapSignal(
        sample_id=s["sample_id"],
        repeat=s.get("repeat", 0),
        turn=s.get("turn", 0),
        source=s["source"],
        weight=s.get("weight", -1.0),
        tool=s.get("tool"),
        target=s.get("target", ""),
        context=s.get("context", ""),
        occurrences=s.get("occurrences", 1),
        note=s.get("note"),
        window=s.get("window"),
        classifier_verdict=None
        if v is None
        else HedgingVerdict(
            is_uncertainty=v["is_uncertainty"],
            confidence=v["confidence"],
            reason=v.get("reason", ""),
            origin=v.get("origin", "llm"),
        ),
        calls=tuple(s.get("calls", ())),
    )
