"""Per-variant operational summary (tasks, errors by cause, judging, cost known / unknown,
tokens, latency, assertion pass rate, layer means) computed from stored result records."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from knowmeter import defaults

#: Why a task errored, from its stored error: the runner's timeout, an exception inside
#: knowmeter or the executor (``TypeError: …``), or an error the executor reported.
ERROR_CAUSES = ("timeout", "crash", "executor error")
_CRASH = re.compile(r"^[A-Z][A-Za-z]*(?:Error|Exception|Interrupt): ")
#: The judge-layer message when the sample gives the judge nothing to grade against.
_NO_RUBRIC = "the sample has no rubric"


def error_cause(exec_record: dict[str, Any]) -> str:
    """The cause of a failed execution (one of ``ERROR_CAUSES``)."""
    message = str(exec_record.get("error") or "")
    if exec_record.get("timed_out") or message.startswith("timed out"):
        return "timeout"
    return "crash" if _CRASH.match(message) else "executor error"


@dataclass
class _Acc:
    tasks: int = 0
    errors: int = 0
    cached: int = 0
    cost_known: float = 0.0
    cost_known_tasks: int = 0
    cost_unknown_tasks: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_unknown_tasks: int = 0
    latencies: list[float] = field(default_factory=list)
    assertions_passed: float = 0.0
    assertions_total: float = 0.0
    layer_values: dict[str, list[float]] = field(default_factory=dict)
    layer_sets: Counter[str] = field(default_factory=Counter)
    outputs_truncated: int = 0
    error_messages: Counter[str] = field(default_factory=Counter)
    causes: dict[str, list[Any]] = field(default_factory=dict)  # cause -> [count, first message]
    judged: int = 0
    judge_failed: int = 0
    judge_no_rubric: int = 0
    judge_metrics_scored: int = 0
    judge_metrics_failed: int = 0
    judge_first_error: str | None = None
    warnings: dict[str, list[Any]] = field(default_factory=dict)  # kind -> [count, first message]

    def judging(self, rec: dict[str, Any]) -> None:
        """Count what the judges did for one graded task."""
        grade = rec.get("grade") or {}
        layers = grade.get("layers") or {}
        error = grade.get("judge_error")
        if layers.get("judge") is not None:
            self.judged += 1
        elif error and str(error).startswith(_NO_RUBRIC):
            self.judge_no_rubric += 1
        elif error:
            self.judge_failed += 1
            self.judge_first_error = self.judge_first_error or str(error)[:200]
        for det in grade.get("assertions") or []:
            judges = (det.get("details") or {}).get("judges") if isinstance(det.get("details"), dict) else None
            if not judges:
                continue
            if det.get("passed") is None:
                self.judge_metrics_failed += 1
                self.judge_first_error = self.judge_first_error or str(det.get("message") or "")[:200]
            else:
                self.judge_metrics_scored += 1


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def summarize_operations(records: Iterable[dict[str, Any]], variants: list[str]) -> dict[str, dict[str, Any]]:
    """One summary per variant, in ``variants`` order. Unknowns are ``None``, never 0."""
    acc: dict[str, _Acc] = {v: _Acc() for v in variants}
    for rec in records:
        a = acc.setdefault(rec["variant"], _Acc())
        ex = rec.get("exec") or {}
        a.tasks += 1
        a.cached += bool(rec.get("cached"))
        if ex.get("error"):
            a.errors += 1
            a.error_messages[str(ex["error"])[:120]] += 1
            first = a.causes.setdefault(error_cause(ex), [0, str(ex["error"])[:200]])
            first[0] += 1
        elif rec.get("grade") is not None:
            a.judging(rec)
        for w in ((ex.get("trace") or {}).get("meta") or {}).get("warnings") or []:
            entry = a.warnings.setdefault(str(w.get("kind")), [0, str(w.get("message"))[:300]])
            entry[0] += 1
        cost = ex.get("cost_usd")
        if rec.get("cached"):
            a.cost_known_tasks += 1  # a cached answer is known to have cost nothing in this run
        elif cost is None:
            a.cost_unknown_tasks += 1
        else:
            a.cost_known += float(cost)
            a.cost_known_tasks += 1
        usage = ex.get("usage") or {}
        tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
        if tokens_in is None or tokens_out is None:  # one count unknown: not summed as 0
            a.tokens_unknown_tasks += 1
        else:
            a.input_tokens += int(tokens_in)
            a.output_tokens += int(tokens_out)
        if ex.get("latency_ms") is not None:
            a.latencies.append(float(ex["latency_ms"]))
        grade = rec.get("grade") or {}
        for det in grade.get("assertions") or []:
            if det.get("passed") is None:
                continue
            w = float(det.get("weight", 1.0))
            a.assertions_total += w
            a.assertions_passed += w if det["passed"] else 0.0
        if not ex.get("error"):
            layers = grade.get("layers") or {}
            for layer in defaults.LAYERS:
                if layers.get(layer) is not None:
                    a.layer_values.setdefault(layer, []).append(float(layers[layer]))
            if grade.get("composite") is not None:
                a.layer_values.setdefault("composite", []).append(float(grade["composite"]))
            a.layer_sets["+".join(grade.get("layers_used") or []) or "none"] += 1
            a.outputs_truncated += grade.get("output_truncated") is not None
    out: dict[str, dict[str, Any]] = {}
    for name, a in acc.items():
        lat = np.array(a.latencies) if a.latencies else None
        out[name] = {
            "tasks": a.tasks,
            "errors": a.errors,
            "cached": a.cached,
            "error_examples": [m for m, _ in a.error_messages.most_common(3)],
            "errors_by_cause": {
                c: {"count": a.causes[c][0], "first": a.causes[c][1]} for c in ERROR_CAUSES if c in a.causes
            },
            "exec_warnings": {k: {"count": n, "first": first} for k, (n, first) in a.warnings.items()},
            "judging": {
                "judged": a.judged,
                "failed": a.judge_failed,
                "no_rubric": a.judge_no_rubric,
                "metrics_scored": a.judge_metrics_scored,
                "metrics_failed": a.judge_metrics_failed,
                "first_error": a.judge_first_error,
            },
            "cost": {
                "known_usd": round(a.cost_known, 6) if a.cost_known_tasks else None,
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
            "assertion_pass_rate": (a.assertions_passed / a.assertions_total) if a.assertions_total else None,
            "layer_means": {k: _mean(v) for k, v in a.layer_values.items()},
            "layer_sets": dict(a.layer_sets),
            "outputs_truncated": a.outputs_truncated,
        }
    return out
