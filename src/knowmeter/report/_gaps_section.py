"""The report's knowledge-gap and coverage section, per variant, always with the watermark."""

from __future__ import annotations

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


def gaps_section(run: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    """``gaps``: per-variant gap rate, weighted gap rate, inventory; ``coverage``: per-variant
    knowledge-file coverage. Both carry the sample-set watermark."""
    watermark = Watermark.from_dict(run["watermark"])
    cfg = run["config"]
    base = Path(cfg["base_dir"])
    gap_rows: list[GapSummary] = []
    coverage_rows: list[Coverage] = []
    for v in run["variants"]:
        mine = [r for r in records if r["variant"] == v["name"]]
        tasks = [_task_gaps(r) for r in mine if (r.get("analysis") or {}).get("gaps")]
        summary = aggregate_gaps(tasks, watermark, variant=v["name"])
        root = variant_root(run, v)
        metas = [_trace_meta(r) for r in mine]
        files = knowledge_files(
            root,
            artifact=v.get("path"),
            knowledge_dirs=[(base / d).resolve() for d in cfg.get("knowledge_dirs") or []],
            skill_name=_skill_folder(metas, v),
            artifact_in_context=bool(metas) and all(_artifact_delivery(m, v) in IN_CONTEXT_DELIVERIES for m in metas),
        )
        accesses = [r["analysis"]["access"] for r in mine if (r.get("analysis") or {}).get("access") is not None]
        cov = coverage(files, accesses, watermark, variant=v["name"], injected=_memory_delivered(metas))
        gap_rows.append(summary)
        coverage_rows.append(cov)
    return {"gaps": GapsSection(watermark=watermark, variants=gap_rows),
            "coverage": CoverageSection(watermark=watermark, variants=coverage_rows)}


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


def _skill_folder(metas: list[dict[str, Any]], variant: dict[str, Any]) -> str | None:
    """The name the artifact was installed (and is invoked) under, else the variant's name."""
    if variant["kind"] == "baseline":
        return None
    folders = [m["skill_folder"] for m in metas if isinstance(m.get("skill_folder"), str)]
    return folders[0] if folders else str(variant["name"])


def _memory_delivered(metas: list[dict[str, Any]]) -> set[str]:
    """Memory files (workspace keys) the executors reported delivered in every task."""
    sets = [set(m.get("memory_delivered") or ()) for m in metas]
    return set.intersection(*sets) if sets else set()


def _task_gaps(record: dict[str, Any]) -> TaskGaps:
    try:
        return TaskGaps.from_dict(record["analysis"]["gaps"])
    except RecordError as exc:
        raise RecordError(f"task {record.get('task_id')!r}: analysis.gaps: {exc}") from None
