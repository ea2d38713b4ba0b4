"""The report's ``resources`` section: stored records → what each task took (cost, latency,
tokens) → each treatment's paired difference from the control (``knowmeter.compare``)."""

from __future__ import annotations

from typing import Any

from knowmeter.compare import ResourcePairs, ResourceTable
from knowmeter.report._fold import SectionBuilder, TaskKey
from knowmeter.report._overrides import NO_OVERRIDES, ReportOverrides, given
from knowmeter.store import RunRecord, TaskRecord


def _tokens(task: TaskRecord) -> float | None:
    """Input + output tokens, unknown unless both are known."""
    usage = task.exec.usage or {}
    tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
    return None if tokens_in is None or tokens_out is None else float(tokens_in + tokens_out)


class _Resources:
    """The resources section folded over a run's task records (in any order: the comparison pairs
    tasks by sample and repeat, and sorts the pairs)."""

    def __init__(self, run: RunRecord, overrides: ReportOverrides) -> None:
        self._run = run
        self._b = given(overrides.bootstrap_samples, run.config.bootstrap_samples)
        self._seed = given(overrides.seed, run.config.seed)
        self._table = ResourceTable()
        self._variants: set[str] = set()  # with a task, finished or not
        self._pairs: ResourcePairs | None = None
        self._announced = False

    def add(self, key: TaskKey, task: TaskRecord) -> None:
        repeat, sample, variant = key
        self._variants.add(variant)
        ex = task.exec
        if not ex.error and task.grade is not None:  # only finished tasks are compared
            self._table.add(sample, repeat, variant, (ex.cost_usd, ex.latency_ms, _tokens(task)))

    def announce(self) -> None:
        """Pair the tasks read so far and tell the report's ``shared_resamples`` block what
        ``result`` will resample, so a draw made before (the comparison's) serves them."""
        run, table, present = self._run, self._table, self._variants
        self._table, self._variants = ResourceTable(), set()
        names = [v.name for v in run.variants if v.name in present]
        control = run.control.name if run.control is not None else names[0] if names else None
        self._pairs, self._announced = None, True
        if control is not None and control in present and len(names) >= 2:
            treatments = [n for n in names if n != control]
            self._pairs = table.pairs(control=control, treatments=treatments)
            self._pairs.announce(b=self._b, seed=self._seed)

    def result(self) -> dict[str, Any]:
        if not self._announced:
            self.announce()
        pairs, self._pairs, self._announced = self._pairs, None, False
        return {"resources": pairs.compare(b=self._b, seed=self._seed) if pairs else None}


def resources_section(overrides: ReportOverrides = NO_OVERRIDES) -> SectionBuilder:
    """A ``SectionBuilder`` adding ``resources`` (None for a run with one variant), seeded and
    resampled as the run's comparison is (``knowmeter report`` overrides included)."""
    return lambda run: _Resources(run, overrides)
