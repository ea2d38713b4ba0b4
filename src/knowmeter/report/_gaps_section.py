"""The report's knowledge-gap and coverage section, per variant, always with the watermark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowmeter._record import RecordError
from knowmeter.analysis import TaskGaps, aggregate_gaps, coverage, knowledge_files
from knowmeter.watermark import Watermark

#: executors whose agent auto-loads CLAUDE.md / AGENTS.md from its working directory
MEMORY_LOADING_EXECUTORS = frozenset({"claude", "claude-sdk", "codex"})


def variant_root(run: dict[str, Any], variant: dict[str, Any]) -> Path:
    """The working directory a variant's agent ran in (its cwd, else the config's folder)."""
    return Path(variant["cwd"]) if variant.get("cwd") else Path(run["config"]["base_dir"])


def gaps_section(run: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    """``gaps``: per-variant gap rate, weighted gap rate, inventory; ``coverage``: per-variant
    knowledge-file coverage. Both carry the sample-set watermark."""
    watermark = Watermark.from_dict(run["watermark"])
    cfg = run["config"]
    base = Path(cfg["base_dir"])
    gap_rows: list[dict[str, Any]] = []
    coverage_rows: list[dict[str, Any]] = []
    for v in run["variants"]:
        mine = [r for r in records if r["variant"] == v["name"]]
        tasks = [_task_gaps(r) for r in mine if (r.get("analysis") or {}).get("gaps")]
        summary = aggregate_gaps(tasks, watermark, variant=v["name"])
        root = variant_root(run, v)
        files = knowledge_files(
            root,
            artifact=v.get("path"),
            knowledge_dirs=[(base / d).resolve() for d in cfg.get("knowledge_dirs") or []],
            skill_name=v["name"] if v["kind"] != "baseline" else None,
            artifact_in_context=v["kind"] != "baseline",
            memory_in_context=run["executor"]["name"] in MEMORY_LOADING_EXECUTORS,
        )
        accesses = [r["analysis"]["access"] for r in mine if (r.get("analysis") or {}).get("access") is not None]
        cov = coverage(files, accesses, watermark, variant=v["name"])
        gap_rows.append(summary.to_dict())
        coverage_rows.append(cov.to_dict())
    return {"gaps": {"watermark": watermark.to_dict(), "variants": gap_rows},
            "coverage": {"watermark": watermark.to_dict(), "variants": coverage_rows}}


def _task_gaps(record: dict[str, Any]) -> TaskGaps:
    try:
        return TaskGaps.from_dict(record["analysis"]["gaps"])
    except RecordError as exc:
        raise RecordError(f"task {record.get('task_id')!r}: analysis.gaps: {exc}") from None
