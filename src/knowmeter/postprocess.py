"""The per-task post-processing (grade → analyze), run as each task finishes. Built from a run's
configuration only, so a resumed run does exactly what the original run would have done; it needs
none of the report stack (``knowmeter.pipeline``), which is imported once the tasks ran."""

from __future__ import annotations

from pathlib import Path

from knowmeter.analysis import GapSignal, HedgingClassifier, TaskGaps, accessed_files, analyze_task
from knowmeter.config import RunConfig
from knowmeter.evaluation import Prepared
from knowmeter.executors import ExecResult
from knowmeter.grading import GradingConfig, JudgeSpec, grade
from knowmeter.judges import executor_for
from knowmeter.runner import Budget, MeteredExecutor, PostProcess, Task
from knowmeter.store import AnalysisRecord, GapsRecord, Processed, SignalRecord


def hedging_classifier(config: RunConfig, budget: Budget) -> HedgingClassifier | None:
    """The run's LLM hedging classifier (one per run: its 50-candidate cap and cache are
    run-wide), or None for regex-only hedging. Its calls are charged to ``budget``."""
    if not config.hedging_judge:
        return None
    executor, model = executor_for(config.hedging_judge, f"hedging classifier {config.hedging_judge!r}")
    return HedgingClassifier(
        MeteredExecutor(executor, budget, "hedging"), model=model, max_candidates=config.hedging_max_candidates
    )


def make_post_process(prepared: Prepared, budget: Budget) -> PostProcess:
    """Grade and analyze each finished task (results are stored with the record). Every judge,
    grader and classifier call is charged to ``budget`` (the run's, shared with the agent)."""

    cfg = prepared.config
    grading = GradingConfig(
        length_debias=cfg.length_debias, judge_repeat=cfg.judge_repeat, max_output_chars=cfg.max_graded_output_chars
    )
    classifier = hedging_classifier(cfg, budget)
    judges = [JudgeSpec(j.name, MeteredExecutor(j.executor, budget, "judge"), j.model) for j in prepared.judges]

    async def post_process(task: Task, result: ExecResult) -> Processed:
        meta_root = result.trace.meta.get("workspace_root")
        root = Path(meta_root) if meta_root else task.workspace
        gaps = analyze_task(
            result.trace,
            sample_id=task.sample.sample_id,
            repeat=task.repeat,
            prompt_text=task.sample.full_prompt(),
            ok=result.ok,
            workspace_root=root,
            output_text=result.output,
            hedging_recall="broad" if classifier else "strict",
        )
        if classifier is not None and result.ok:
            gaps = await classifier.apply(gaps)
        prefixes = result.trace.meta.get("path_prefixes")
        access = accessed_files(result.trace, root, prefixes=prefixes if isinstance(prefixes, dict) else None)
        analysis = AnalysisRecord(gaps=stored_gaps(gaps), access=access)
        if result.error is not None:
            # a failed execution is not graded: it is an error, not a low score
            return Processed(grade=None, analysis=analysis)
        g = await grade(
            task.sample,
            result,
            assertions=prepared.assertions[task.sample.sample_id],
            judges=judges,
            config=grading,
            task_id=task.id,
        )
        return Processed(grade=g, analysis=analysis)

    return post_process


def stored_gaps(gaps: TaskGaps) -> GapsRecord:
    """The stored form of a task's gap analysis, built field by field (a field renamed in
    ``TaskGaps`` or in ``GapsRecord`` fails mypy here)."""
    return {
        "sample_id": gaps.sample_id,
        "repeat": gaps.repeat,
        "ok": gaps.ok,
        "signals": [_stored_signal(s) for s in gaps.signals],
        "hedging_mode": gaps.hedging_mode,
        "hedging_dropped": gaps.hedging_dropped,
        "excluded": dict(gaps.excluded),
        "retried": [_stored_signal(s) for s in gaps.retried],
        "hedging_unjudged": gaps.hedging_unjudged,
    }


def _stored_signal(s: GapSignal) -> SignalRecord:
    """One signal as stored: its fields that are None are left out."""
    out: SignalRecord = {"sample_id": s.sample_id, "repeat": s.repeat, "turn": s.turn, "source": s.source}
    out["weight"] = s.weight
    if s.tool is not None:
        out["tool"] = s.tool
    out["target"], out["context"], out["occurrences"] = s.target, s.context, s.occurrences
    if s.note is not None:
        out["note"] = s.note
    if s.window is not None:
        out["window"] = s.window
    if (v := s.classifier_verdict) is not None:
        out["classifier_verdict"] = {
            "is_uncertainty": v.is_uncertainty,
            "confidence": v.confidence,
            "reason": v.reason,
            "origin": v.origin,
        }
    out["calls"] = list(s.calls)
    return out
