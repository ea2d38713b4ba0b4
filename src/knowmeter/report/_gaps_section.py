"""The report's knowledge-gap and coverage section, per variant, always with the watermark."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowmeter._record import RecordError
from knowmeter.analysis import Coverage, GapSummary, TaskGaps, aggregate_gaps, coverage, knowledge_files
from knowmeter.report._model import CoverageSection, GapsSection
from knowmeter.watermark import Watermark

#: artifact deliveries that put the artifact into every request (a ``skill`` is loaded only when invoked)
IN_CONTEXT_DELIVERIES = frozenset({"system_prompt", "agents_md"})


def variant_root(run: dict[str, Any], variant: dict[str, Any]) -> Path:
    """The working directory a variant's agent ran in (its cwd, else the config's folder)."""
    return Path(variant["cwd"]) if variant.get("cwd") else Path(run["config"]["base_dir"])


@dataclass
class _VariantTasks:
    """What the section needs of one variant's tasks (gathered in one pass over the records)."""

    gaps: list[TaskGaps] = field(default_factory=list)
    accesses: list[dict[str, Any]] = field(default_factory=list)
    tasks: int = 0
    all_in_context: bool = True
    skill_folder: str | None = None
    memory: set[str] | None = None  # memory files delivered in every task so far

    def add(self, record: dict[str, Any], variant: dict[str, Any]) -> None:
        analysis = record.get("analysis") or {}
        if analysis.get("gaps"):
            self.gaps.append(_task_gaps(record))
        if analysis.get("access") is not None:
            self.accesses.append(analysis["access"])
        meta = _trace_meta(record)
        self.tasks += 1
        self.all_in_context = self.all_in_context and _artifact_delivery(meta, variant) in IN_CONTEXT_DELIVERIES
        if self.skill_folder is None and isinstance(meta.get("skill_folder"), str):
            self.skill_folder = meta["skill_folder"]
        delivered = set(meta.get("memory_delivered") or ())
        self.memory = delivered if self.memory is None else self.memory & delivered


def gaps_section(run: dict[str, Any], records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``gaps``: per-variant gap rate, weighted gap rate, inventory; ``coverage``: per-variant
    knowledge-file coverage. Both carry the sample-set watermark. One pass over ``records``."""
    watermark = Watermark.from_dict(run["watermark"])
    cfg = run["config"]
    base = Path(cfg["base_dir"])
    by_name = {v["name"]: v for v in run["variants"]}
    acc = {name: _VariantTasks() for name in by_name}
    for r in records:
        if r["variant"] in acc:
            acc[r["variant"]].add(r, by_name[r["variant"]])
    gap_rows: list[GapSummary] = []
    coverage_rows: list[Coverage] = []
    for v in run["variants"]:
        mine = acc[v["name"]]
        files = knowledge_files(
            variant_root(run, v),
            artifact=v.get("path"),
            knowledge_dirs=[(base / d).resolve() for d in cfg.get("knowledge_dirs") or []],
            # the name the artifact was installed (and is invoked) under, else the variant's name
            skill_name=None if v["kind"] == "baseline" else mine.skill_folder or str(v["name"]),
            artifact_in_context=bool(mine.tasks) and mine.all_in_context,
        )
        gap_rows.append(aggregate_gaps(mine.gaps, watermark, variant=v["name"]))
        coverage_rows.append(
            coverage(files, mine.accesses, watermark, variant=v["name"], injected=mine.memory or set())
        )
    return {
        "gaps": GapsSection(watermark=watermark, variants=gap_rows),
        "coverage": CoverageSection(watermark=watermark, variants=coverage_rows),
    }


def _trace_meta(record: dict[str, Any]) -> dict[str, Any]:
    meta = ((record.get("exec") or {}).get("trace") or {}).get("meta")
    return meta if isinstance(meta, dict) else {}


def _artifact_delivery(meta: dict[str, Any], variant: dict[str, Any]) -> str | None:
    """How the task's executor delivered the artifact, as it reported; executors that report
    nothing (offline, script, model APIs) pass it as the system text."""
    if "artifact_delivery" in meta:
        delivery = meta["artifact_delivery"]
        return delivery if isinstance(delivery, str) else None
    return None if variant["kind"] == "baseline" else "system_prompt"


def _task_gaps(record: dict[str, Any]) -> TaskGaps:
    try:
        return TaskGaps.from_dict(record["analysis"]["gaps"])
    except RecordError as exc:
        raise RecordError(f"task {record.get('task_id')!r}: analysis.gaps: {exc}") from None
