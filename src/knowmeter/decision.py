"""The run's outcome, decided once: the comparison's verdict (``knowmeter.compare``, taken as it
is) plus everything that stops a run from passing whatever its verdict says — nothing measured
(most tasks errored), an incomplete run, a judge that never produced a score, a failed gate.

``eval``, ``report``, ``runs`` and the report's first and last lines all read this one object,
so they cannot disagree: the first line is ``headline``, the last ``recommendation``, the exit
code ``exit_code``, and ``knowmeter runs`` lists ``outcome``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from knowmeter.exit_codes import EXIT_NOT_PASSED, EXIT_OK

BlockerKind = Literal["not_measured", "incomplete", "judge_failed", "gate_failed"]

#: The outcome word each blocker gives the run, in the order they take precedence.
OUTCOMES: dict[BlockerKind, str] = {
    "not_measured": "NOT MEASURED",
    "incomplete": "INCOMPLETE",
    "judge_failed": "JUDGE FAILED",
    "gate_failed": "GATE FAILED",
}

#: How a blocker is named in a line of its own (``✗ gate failed: …``).
LABELS: dict[BlockerKind, str] = {k: v.lower() for k, v in OUTCOMES.items()}

#: A run whose errored tasks are at least this share of its finished tasks measured the
#: executor's failures, not the knowledge: it gets no verdict.
NOT_MEASURED_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class Blocker:
    """A reason the run cannot pass, whatever its verdict."""

    kind: BlockerKind
    message: str


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of a run (stored as ``report["decision"]``)."""

    outcome: str
    verdict: str | None
    exit_code: int
    headline: str
    recommendation: str
    blockers: list[Blocker] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["passed"] = self.passed
        return d


def _errors_line(variants: list[dict[str, Any]]) -> str:
    """``22 executor error (first: can't open file …); 3 timeout (first: …)`` over all variants."""
    causes: dict[str, list[Any]] = {}
    for v in variants:
        for cause, c in (v.get("errors_by_cause") or {}).items():
            entry = causes.setdefault(cause, [0, c["first"]])
            entry[0] += c["count"]
    return "; ".join(f"{n} {cause} (first: {first})" for cause, (n, first) in causes.items())


def _not_measured(run: dict[str, Any], variants: list[dict[str, Any]]) -> Blocker | None:
    done = sum(v["tasks"] for v in variants)
    errors = sum(v["errors"] for v in variants)
    if done == 0:
        return Blocker("not_measured", "no task finished: nothing was measured")
    if errors / done < NOT_MEASURED_SHARE:
        return None
    return Blocker("not_measured", f"{errors} of {done} tasks errored — nothing about the knowledge was measured: "
                                   f"{_errors_line(variants)}")


def _incomplete(run: dict[str, Any]) -> Blocker | None:
    missing = run["tasks_total"] - run["tasks_done"]
    if run.get("status") == "complete" and missing <= 0:
        return None
    resume = f"knowmeter eval --resume {run['id']}"
    why = str((run.get("partial") or {}).get("reason") or f"the run ended {run.get('status')}")
    if resume not in why:
        why += f"; finish it with {resume}"
    return Blocker("incomplete", f"{run['tasks_done']}/{run['tasks_total']} tasks — {why}")


def _judging(run: dict[str, Any], variants: list[dict[str, Any]]) -> tuple[Blocker | None, list[str]]:
    """A judge configured but never successful blocks the run; partial failures and samples
    without a rubric are warnings."""
    if not run.get("judges"):
        return None, []
    totals = {k: sum((v.get("judging") or {}).get(k) or 0 for v in variants)
              for k in ("judged", "failed", "no_rubric", "metrics_scored", "metrics_failed")}
    first = next((v["judging"]["first_error"] for v in variants if (v.get("judging") or {}).get("first_error")),
                 None)
    graded = totals["judged"] + totals["failed"] + totals["no_rubric"]
    warnings = []
    if totals["no_rubric"]:
        warnings.append(f"judge: {totals['no_rubric']} of {graded} graded tasks have no rubric or dimensions, so "
                        "no judge was asked (add a rubric to those samples to judge them)")
    if totals["failed"] or totals["metrics_failed"]:
        warnings.append(f"judge: failed on {totals['failed']} task(s) and {totals['metrics_failed']} judge-backed "
                        f"assertion(s); first error: {first}")
    if graded and totals["judged"] == 0 and totals["metrics_scored"] == 0:
        why = f"every call failed (first error: {first})" if first else "no sample has a rubric or dimensions"
        return Blocker("judge_failed", f"the judge never produced a score: {why}"), warnings
    return None, warnings


def _recommendation(blocker: Blocker, run: dict[str, Any]) -> str:
    if blocker.kind == "not_measured":
        return "FIX THE RUN — nothing was measured; fix the executor errors above and run knowmeter eval again."
    if blocker.kind == "incomplete":
        return (f"NOT DECIDED — the run is incomplete ({run['tasks_done']}/{run['tasks_total']} tasks); "
                f"finish it with knowmeter eval --resume {run['id']}.")
    if blocker.kind == "judge_failed":
        return "DO NOT SHIP YET — the configured judge never scored; fix it (see above) and run knowmeter eval again."
    return f"DO NOT SHIP — a gate failed: {blocker.message}."


def decide(report: dict[str, Any]) -> Decision:
    """The decision for a built report (its ``run``, ``variants``, ``verdict`` and ``gates``)."""
    run, variants = report["run"], report["variants"]
    # a comprehension run (knowmeter comprehend) carries its skill verdict in its own section
    verdict = report.get("verdict") or (report.get("comprehension") or {}).get("verdict") or {}
    level = verdict.get("level")
    blockers = [b for b in (_not_measured(run, variants), _incomplete(run)) if b is not None]
    judge_blocker, warnings = _judging(run, variants)
    warnings += [f"{v['name']}: {w['count']} task(s): {w['first']}" for v in variants
                 for w in (v.get("exec_warnings") or {}).values()]
    if judge_blocker is not None:
        blockers.append(judge_blocker)
    blockers += [Blocker("gate_failed", g["message"])
                 for g in (report.get("gates") or {}).get("results", []) if not g["passed"]]
    if not blockers:
        headline = str(verdict.get("headline") or level or "no verdict")
        if level and not headline.startswith(level):
            headline = f"{level} · {headline}"
        code = EXIT_OK if verdict.get("exit_code") == 0 else EXIT_NOT_PASSED
        return Decision(outcome=str(level), verdict=level, exit_code=code, headline=headline,
                        recommendation=str(verdict.get("ship_recommendation") or ""), warnings=warnings)
    first = blockers[0]
    outcome = OUTCOMES[first.kind]
    shown = "no verdict" if first.kind == "not_measured" or not level else f"verdict on what was measured: {level}"
    return Decision(outcome=outcome, verdict=level, exit_code=EXIT_NOT_PASSED,
                    headline=f"{outcome} · {first.message} ({shown})",
                    recommendation=_recommendation(first, run), blockers=blockers, warnings=warnings)
