"""Per-variant operational summary (tasks, errors by cause, judging, cost known / unknown,
tokens, latency, assertion pass rate, layer means) computed from stored result records."""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from knowmeter import defaults
from knowmeter.report._fold import First, TaskKey
from knowmeter.store import ExecRecord, Grade, TaskRecord

#: Why a task errored, from its stored error: the runner's timeout, an exception inside
#: knowmeter or the executor (``TypeError: …``), or an error the executor reported.
ERROR_CAUSES = ("timeout", "crash", "executor error")
_CRASH = re.compile(r"^[A-Z][A-Za-z]*(?:Error|Exception|Interrupt): ")
#: The judge-layer message when the sample gives the judge nothing to grade against.
_NO_RUBRIC = "the sample has no rubric"


def error_cause(exec_record: ExecRecord) -> str:
    """The cause of a failed execution (one of ``ERROR_CAUSES``)."""
    message = exec_record.error or ""
    if exec_record.timed_out or message.startswith("timed out"):
        return "timeout"
    return "crash" if _CRASH.match(message) else "executor error"


@dataclass
class _Acc:
    """One variant's figures, folded over its task records in any order: what depends on order
    (the first error, the example messages, float sums) is kept by each task's report-order key,
    so the summary is the same whatever order the tasks finished in."""

    tasks: int = 0
    errors: int = 0
    cached: int = 0
    costs: array[float] = field(default_factory=lambda: array("d"))
    cost_known_tasks: int = 0
    cost_unknown_tasks: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_unknown_tasks: int = 0
    latencies: array[float] = field(default_factory=lambda: array("d"))
    assertions_passed: array[float] = field(default_factory=lambda: array("d"))
    assertions_total: array[float] = field(default_factory=lambda: array("d"))
    layer_values: dict[str, array[float]] = field(default_factory=dict)  # 8 bytes a value
    layer_sets: First = field(default_factory=First)
    outputs_truncated: int = 0
    error_messages: First = field(default_factory=First)
    causes: First = field(default_factory=First)  # cause (first message)
    judged: int = 0
    judge_failed: int = 0
    judge_no_rubric: int = 0
    judge_metrics_scored: int = 0
    judge_metrics_failed: int = 0
    judge_errors: First = field(default_factory=First)
    warnings: First = field(default_factory=First)  # kind (first message)

    def judging(self, key: TaskKey, grade: Grade) -> None:
        """Count what the judges did for one graded task."""
        error = grade.judge_error
        if grade.layers.get("judge") is not None:
            self.judged += 1
        elif error and str(error).startswith(_NO_RUBRIC):
            self.judge_no_rubric += 1
        elif error:
            self.judge_failed += 1
            self.judge_errors.add(key, "", str(error)[:200])
        for det in grade.assertions:
            if not (det.details or {}).get("judges"):
                continue
            if det.passed is None:
                self.judge_metrics_failed += 1
                self.judge_errors.add(key, "", (det.message or "")[:200])
            else:
                self.judge_metrics_scored += 1

    def add(self, key: TaskKey, task: TaskRecord) -> None:
        """Fold one task record in."""
        ex, grade = task.exec, task.grade
        self.tasks += 1
        self.cached += task.cached
        if ex.error:
            self.errors += 1
            self.error_messages.add(key, ex.error[:120])
            self.causes.add(key, error_cause(ex), ex.error[:200])
        elif grade is not None:
            self.judging(key, grade)
        meta = ex.trace.known if ex.trace is not None else None
        for w in (meta.warnings if meta is not None else None) or []:
            self.warnings.add(key, str(w.kind), str(w.message)[:300])
        cost = ex.cost_usd
        if task.cached:
            self.cost_known_tasks += 1  # a cached answer is known to have cost nothing in this run
        elif cost is None:
            self.cost_unknown_tasks += 1
        else:
            self.costs.append(float(cost))
            self.cost_known_tasks += 1
        usage = ex.usage or {}
        tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
        if tokens_in is None or tokens_out is None:  # one count unknown: not summed as 0
            self.tokens_unknown_tasks += 1
        else:
            self.input_tokens += tokens_in
            self.output_tokens += tokens_out
        if ex.latency_ms is not None:
            self.latencies.append(ex.latency_ms)
        for det in grade.assertions if grade is not None else []:
            if det.passed is None:
                continue
            self.assertions_total.append(det.weight)
            self.assertions_passed.append(det.weight if det.passed else 0.0)
        if not ex.error:
            for layer in defaults.LAYERS:
                value = grade.layers.get(layer) if grade is not None else None
                if value is not None:
                    self.layer_values.setdefault(layer, array("d")).append(value)
            if grade is not None and grade.composite is not None:
                self.layer_values.setdefault("composite", array("d")).append(grade.composite)
            self.layer_sets.add(key, "+".join(grade.layers_used if grade is not None else []) or "none")
            self.outputs_truncated += grade is not None and grade.output_truncated is not None


def _mean(values: array[float]) -> float | None:
    return float(np.mean(sorted(values))) if values else None


class OperationsSummary:
    """The per-variant operational summaries, folded over the task records (one pass)."""

    def __init__(self, variants: list[str]) -> None:
        self._acc: dict[str, _Acc] = {v: _Acc() for v in variants}

    def add(self, key: TaskKey, task: TaskRecord) -> None:
        self._acc.setdefault(task.variant, _Acc()).add(key, task)

    def result(self) -> dict[str, dict[str, Any]]:
        """One summary per variant, in the order given. Unknowns are ``None``, never 0. The
        inputs are freed once summed up (while the report's other sections are computed)."""
        acc, self._acc = self._acc, {}
        return {name: _summary(a) for name, a in acc.items()}


def _summary(a: _Acc) -> dict[str, Any]:
    lat = np.array(sorted(a.latencies)) if a.latencies else None
    causes = {c: (n, first) for c, n, first in a.causes.items()}
    total = math.fsum(a.assertions_total)
    return {
        "tasks": a.tasks,
        "errors": a.errors,
        "cached": a.cached,
        "error_examples": a.error_messages.most_common(3),
        "errors_by_cause": {c: {"count": causes[c][0], "first": causes[c][1]} for c in ERROR_CAUSES if c in causes},
        "exec_warnings": {k: {"count": n, "first": first} for k, n, first in a.warnings.items()},
        "judging": {
            "judged": a.judged,
            "failed": a.judge_failed,
            "no_rubric": a.judge_no_rubric,
            "metrics_scored": a.judge_metrics_scored,
            "metrics_failed": a.judge_metrics_failed,
            "first_error": a.judge_errors.first(),
        },
        "cost": {
            "known_usd": round(math.fsum(a.costs), 6) if a.cost_known_tasks else None,
            "tasks_with_known_cost": a.cost_known_tasks,
            "tasks_with_unknown_cost": a.cost_unknown_tasks,
        },
        "tokens": {
            "input": a.input_tokens,
            "output": a.output_tokens,
            "tasks_with_unknown_usage": a.tokens_unknown_tasks,
        },
        "latency_ms": None
        if lat is None
        else {
            "mean": float(lat.mean()),
            "p50": float(np.percentile(lat, 50)),
            "p95": float(np.percentile(lat, 95)),
        },
        "assertion_pass_rate": math.fsum(a.assertions_passed) / total if total else None,
        "layer_means": {k: _mean(a.layer_values[k]) for k in (*defaults.LAYERS, "composite") if k in a.layer_values},
        "layer_sets": {label: n for label, n, _ in a.layer_sets.items()},
        "outputs_truncated": a.outputs_truncated,
    }
