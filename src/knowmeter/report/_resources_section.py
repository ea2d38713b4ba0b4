"""The report's ``resources`` section: stored records → what each task took (cost, latency,
tokens) → each treatment's paired difference from the control (``knowmeter.compare``)."""

from __future__ import annotations

from typing import Any

from knowmeter.compare import ResourceUse, compare_resources
from knowmeter.report._fold import Ordered, SectionBuilder, TaskKey
from knowmeter.store import TaskRecord


def resource_use(task: TaskRecord) -> ResourceUse:
    """What one stored task took; tokens are input + output, unknown unless both are known."""
    ex = task.exec
    usage = ex.usage or {}
    tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
    return ResourceUse(
        sample_id=task.sample_id,
        repeat=task.repeat,
        variant=task.variant,
        ok=not ex.error and task.grade is not None,
        cost_usd=ex.cost_usd,
        latency_ms=ex.latency_ms,
        tokens=None if tokens_in is None or tokens_out is None else float(tokens_in + tokens_out),
    )


class _Resources:
    """The resources section folded over a run's task records."""

    def __init__(self, run: dict[str, Any], overrides: dict[str, Any] | None) -> None:
        self._run, self._overrides = run, overrides
        self._uses: Ordered[ResourceUse] = Ordered()

    def add(self, key: TaskKey, task: TaskRecord) -> None:
        self._uses.add(key, resource_use(task))

    def result(self) -> dict[str, Any]:
        run, uses, self._uses = self._run, list(self._uses), Ordered()
        present = {u.variant for u in uses}
        names = [v["name"] for v in run["variants"] if v["name"] in present]
        control = next((v["name"] for v in run["variants"] if v["role"] == "control"), names[0] if names else None)
        if control not in present or len(names) < 2:
            return {"resources": None}
        cfg = {**run["config"], **{k: v for k, v in (self._overrides or {}).items() if v is not None}}
        return {
            "resources": compare_resources(
                uses,
                control=control,
                treatments=[n for n in names if n != control],
                b=cfg["bootstrap_samples"],
                seed=cfg["seed"],
            )
        }


def resources_section(overrides: dict[str, Any] | None = None) -> SectionBuilder:
    """A ``SectionBuilder`` adding ``resources`` (None for a run with one variant), seeded and
    resampled as the run's comparison is (``knowmeter report`` overrides included)."""
    return lambda run: _Resources(run, overrides)
