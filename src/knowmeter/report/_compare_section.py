"""The report's statistics section: stored records → observations → paired comparisons,
per-variant statistics, verdict and methodology audit (``knowmeter.compare``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from knowmeter import defaults
from knowmeter.compare import Analysis, CompareConfig, Observation, SequentialRecord, Verdict, analyze
from knowmeter.gold import GoldEvidence, StoredGold, gold_evidence
from knowmeter.report._fold import Ordered, SectionBuilder, Shared, TaskKey
from knowmeter.report._model import Statistics
from knowmeter.report._overrides import NO_OVERRIDES, ReportOverrides, given
from knowmeter.store import ControlReused, ExecRecord, Grade, JudgeOutcome, Layers, RunRecord, TaskRecord


class _Observer:
    """Observations of stored tasks, one per record. Equal score maps and ids are shared between
    observations (one per distinct set of scores), so a large run's comparison holds little more
    than its scores."""

    def __init__(self) -> None:
        self._maps, self._layers = Shared(), Shared()

    def _one(self, mapping: dict[str, Any]) -> dict[str, Any]:
        return self._maps.one(tuple(mapping.items()), mapping)

    def __call__(self, task: TaskRecord) -> Observation:
        """A failed execution is ``ok=False`` (never a low score)."""
        grade = task.grade or _UNGRADED
        return Observation(
            sample_id=sys.intern(task.sample_id),
            repeat=task.repeat,
            variant=sys.intern(task.variant),
            ok=not task.exec.error and task.grade is not None,
            scores=self._one(
                {"composite": grade.composite, **{name: grade.layers.get(name) for name in defaults.LAYERS}}
            ),
            passed=grade.passed,
            judge_scores=self._one({j.judge: j.mean for j in grade.judges}),
            layers_used=self._layers.one(tuple(grade.layers_used), tuple(grade.layers_used)),
        )


#: The grade of a task that has none (its execution failed).
_UNGRADED = Grade()


def observations(tasks: Iterable[TaskRecord]) -> list[Observation]:
    """One observation per stored task, in the order of ``tasks``."""
    observe = _Observer()
    return [observe(task) for task in tasks]


def _judged(task: TaskRecord) -> TaskRecord:
    """What the gold audit reads of a task (``knowmeter.gold.judge_scores``): the rest (its
    answer and trace) is not kept."""
    grade = task.grade
    judges = (
        [JudgeOutcome(judge=j.judge, model=j.model, prompt_hash=j.prompt_hash) for j in grade.judges] if grade else []
    )
    kept = Grade(layers=Layers(judge=grade.layers.judge) if grade else Layers(), judges=judges)
    return task.model_copy(update={"grade": kept, "exec": _NO_EXEC, "analysis": None})


_NO_EXEC = ExecRecord()


def compare_config(run: RunRecord, overrides: ReportOverrides = NO_OVERRIDES) -> CompareConfig:
    """The comparison settings a run was made with, plus ``knowmeter report`` overrides (a run
    recorded before ``max_mde``, ``min_pairs`` or ``stability_limit`` existed reads the
    configuration's defaults, the comparison's own). A sequential run is decided at the level of
    its last look."""
    cfg, ov, looks = run.config, overrides, run.sequential.looks if run.sequential is not None else []
    return CompareConfig(
        threshold=given(ov.threshold, cfg.layer_gate),
        min_effect=cfg.min_effect,
        bootstrap_samples=given(ov.bootstrap_samples, cfg.bootstrap_samples),
        seed=given(ov.seed, cfg.seed),
        max_mde=given(ov.max_mde, cfg.max_mde),
        min_pairs=given(ov.min_pairs, cfg.min_pairs),
        stability_limit=given(ov.stability_limit, cfg.stability_limit),
        sequential_alpha=looks[-1].nominal_alpha if looks else None,
    )


def run_analysis(
    run: RunRecord,
    observed: list[Observation],
    overrides: ReportOverrides = NO_OVERRIDES,
    gold: GoldEvidence | None = None,
) -> Analysis:
    """The comparison of a stored run's ``observed`` tasks (in the report's order); ``gold`` (the
    run's ``gold.json`` checked against its records) feeds the human-aligned audit."""
    control = run.control.name if run.control is not None else None
    names = [v.name for v in run.variants]
    treatments = [n for n in names if n != control]
    if control is None and names:  # no control: the first variant is the reference
        control, treatments = names[0], names[1:]
    # a partial run (report.json says so) compares only the variants that have results
    with_results = {o.variant for o in observed}
    if control not in with_results:
        control, treatments = None, []
    treatments = [t for t in treatments if t in with_results]
    return analyze(observed, control=control, treatments=treatments, config=compare_config(run, overrides), gold=gold)


def _with_stop(verdict: Verdict, record: SequentialRecord | None) -> Verdict:
    """The verdict of a sequential run says where the run stopped and why."""
    if record is None or not record.reason:
        return verdict
    last = record.looks[-1]
    where = (
        f"stopped early after {last.samples} of {record.planned_samples} samples"
        if record.stopped in ("efficacy", "futility")
        else f"all {record.planned_samples} samples run"
    )
    return verdict.model_copy(
        update={
            "headline": f"{verdict.headline} · sequential: {where}",
            "rationale": [f"sequential: {record.reason}", *verdict.rationale],
        }
    )


def _with_reuse(verdict: Verdict, reused: ControlReused | None) -> Verdict:
    """The verdict of a run with a reused control says where the control came from."""
    if reused is None:
        return verdict
    line = (
        f"control reused: {reused.tasks} control result(s) from run {reused.run} (made "
        f"{reused.created_at}), not run again; paired with this run's treatment by sample and repeat"
    )
    return verdict.model_copy(update={"rationale": [line, *verdict.rationale]})


class _Comparison:
    """The statistics section folded over a run's task records."""

    def __init__(self, run: RunRecord, overrides: ReportOverrides, gold: StoredGold | None) -> None:
        self._run, self._overrides, self._gold = run, overrides, gold
        self._observe = _Observer()
        self._observed: Ordered[Observation] = Ordered()
        self._judged: Ordered[TaskRecord] = Ordered()

    def add(self, key: TaskKey, task: TaskRecord) -> None:
        self._observed.add(key, self._observe(task))
        if self._gold is not None:
            self._judged.add(key, _judged(task))

    def result(self) -> dict[str, Any]:
        run = self._run
        evidence = gold_evidence(self._gold, (task.stored() for task in self._judged))
        observed, self._observed, self._judged = list(self._observed), Ordered(), Ordered()
        analysis = run_analysis(run, observed, self._overrides, evidence)
        return {
            "statistics": Statistics(
                config=analysis.config,
                control=analysis.control,
                treatments=analysis.treatments,
                variants=analysis.summaries,
            ),
            "comparisons": analysis.comparisons,
            "verdict": _with_reuse(_with_stop(analysis.verdict, run.sequential), run.control_reused),
            "audit": analysis.audit,
        }


def comparison_section(overrides: ReportOverrides = NO_OVERRIDES, gold: StoredGold | None = None) -> SectionBuilder:
    """A ``SectionBuilder`` adding ``statistics``, ``comparisons``, ``verdict`` and ``audit``
    (its human-aligned badge from ``gold``, the run's stored gold comparison)."""
    return lambda run: _Comparison(run, overrides, gold)
