"""The per-task post-processing (grade → analyze) and the end-of-run stages (compare →
decide → render → store). Both are built from a run's configuration only, so a resumed run or
``knowmeter report`` does exactly what the original run would have done."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from knowmeter.evaluation import Prepared
from knowmeter.executors import ExecResult
from knowmeter.grading import GradingConfig, grade
from knowmeter.report import build_report
from knowmeter.runner import Task
from knowmeter.runner._execute import PostProcess
from knowmeter.store import RunDir, open_index, upsert_run, write_json_atomic


def make_post_process(prepared: Prepared) -> PostProcess:
    """Grade and analyze each finished task (results are stored with the record)."""

    cfg = prepared.config
    grading = GradingConfig(length_debias=cfg.length_debias, judge_repeat=cfg.judge_repeat)

    async def post_process(task: Task, result: ExecResult) -> dict[str, Any]:
        if result.error is not None:
            return {"grade": None}  # a failed execution is not graded: it is an error, not a low score
        g = await grade(task.sample, result, assertions=prepared.assertions[task.sample.sample_id],
                        judges=prepared.judges, config=grading, task_id=task.id)
        return {"grade": g.to_dict()}

    return post_process


def finalize(run_dir: RunDir, *, status: str, wall_s: float | None = None,
             budget: dict[str, Any] | None = None) -> dict[str, Any]:
    """Mark the run finished, build and store report.json, update the index."""
    record = run_dir.read_run()
    record["status"] = status
    record["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    if wall_s is not None:
        record["wall_s"] = round((record.get("wall_s") or 0.0) + wall_s, 3)
    if budget is not None:
        record["budget"] = budget
    write_json_atomic(run_dir.run_file, record)
    report = build_report(run_dir)
    write_json_atomic(run_dir.report_file, report)
    index_run(run_dir, report)
    return report


def rebuild_report(run_dir: RunDir, *, threshold: float | None = None, seed: int | None = None,
                   bootstrap_samples: int | None = None) -> dict[str, Any]:
    """Recompute report.json from stored results (``knowmeter report``), with overrides."""
    report = build_report(run_dir)
    write_json_atomic(run_dir.report_file, report)
    index_run(run_dir, report)
    return report


def index_run(run_dir: RunDir, report: dict[str, Any]) -> None:
    """Write the run and its per-variant figures into the SQLite index."""
    run = report["run"]
    cfg = run["config"]
    wm = run["watermark"]
    verdict = report.get("verdict") or {}
    variants = report["variants"]
    cost_known = [v["cost"]["known_usd"] for v in variants if v["cost"]["known_usd"] is not None]
    from pathlib import Path

    output_dir = Path(cfg["output_dir"]) if Path(cfg["output_dir"]).is_absolute() else \
        Path(cfg["base_dir"]) / cfg["output_dir"]
    gaps = {g["variant"]: g for g in (report.get("gaps") or {}).get("variants", [])}
    with open_index(output_dir) as conn:
        upsert_run(
            conn,
            {
                "id": run["id"], "created_at": run["created_at"], "finished_at": run["finished_at"],
                "status": run["status"], "dir": str(run_dir.path), "git_commit": run["git"]["commit"],
                "git_dirty": None if run["git"]["dirty"] is None else int(run["git"]["dirty"]),
                "executor": run["executor"]["name"], "model": run["executor"].get("model"),
                "sample_set_id": wm["id"], "sample_set_sha": wm["sha256"], "sample_count": wm["count"],
                "verdict": verdict.get("level"), "tasks_total": run["tasks_total"], "tasks_done": run["tasks_done"],
                "cost_known_usd": sum(cost_known) if cost_known else None,
                "cost_unknown_tasks": sum(v["cost"]["tasks_with_unknown_cost"] for v in variants),
            },
            [
                {
                    "run_id": run["id"], "variant": v["name"], "role": v["role"], "artifact_hash": v["artifact_hash"],
                    "composite": (v.get("layer_means") or {}).get("composite"),
                    "coverage": (gaps.get(v["name"]) or {}).get("coverage_rate"),
                    "gap_rate": (gaps.get(v["name"]) or {}).get("gap_rate"),
                    "weighted_gap_rate": (gaps.get(v["name"]) or {}).get("weighted_gap_rate"),
                    "tasks": v["tasks"], "errors": v["errors"], "cost_known_usd": v["cost"]["known_usd"],
                    "cost_unknown_tasks": v["cost"]["tasks_with_unknown_cost"],
                }
                for v in variants
            ],
        )
