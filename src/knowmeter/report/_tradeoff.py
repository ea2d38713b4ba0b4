"""One line per treatment saying what its score change costs: the composite's paired difference
beside the paired relative change in cost per task, latency and tokens, each with its interval —
e.g. ``+0.40 points [+0.12, +0.69] · cost +38% [+21%, +55%] ($0.0120 → $0.0166)``. An unknown
value stays unknown."""

from __future__ import annotations

from knowmeter.compare import PairComparison, ResourceComparison, ResourceDiff

_LABEL = {"cost_usd": "cost per task", "latency_ms": "latency", "tokens": "tokens"}


def _amount(resource: str, value: float) -> str:
    if resource == "cost_usd":
        return f"${value:.4f}"
    if resource == "latency_ms":
        return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"
    return f"{value:,.0f}"


def _signed(resource: str, value: float) -> str:
    return ("+" if value >= 0 else "−") + _amount(resource, abs(value))


def _pct(value: float) -> str:
    return f"{value * 100:+.0f}%".replace("-", "−")


def resource_phrase(d: ResourceDiff) -> str:
    """``cost per task +38% [+21%, +55%] ($0.0120 → $0.0166)``, or what is unknown about it."""
    label = _LABEL[d.resource]
    if d.n_pairs == 0:
        why = f"not reported for the {d.n_unknown} paired task(s)" if d.n_unknown else "no paired task finished"
        return f"{label} unknown ({why})"
    rel, diff = d.relative, d.difference
    assert d.control_mean is not None and d.treatment_mean is not None
    if d.control_mean == d.treatment_mean == 0:
        return f"{label} {_amount(d.resource, 0.0)} in both arms ({d.n_pairs} pairs)"
    if rel.estimate is not None:
        lo, hi = rel.percentile.low, rel.percentile.high
        ci = f"[{_pct(lo)}, {_pct(hi)}]" if lo is not None and hi is not None else "[CI unknown: one sample]"
        change = f"{_pct(rel.estimate)} {ci}"
    else:  # the control's mean is 0: the change in the unit
        lo, hi = diff.percentile.low, diff.percentile.high
        ci = f"[{_signed(d.resource, lo)}, {_signed(d.resource, hi)}]" if lo is not None and hi is not None else ""
        change = f"{_signed(d.resource, diff.estimate or 0.0)} {ci}".rstrip()
    means = f"{_amount(d.resource, d.control_mean)} → {_amount(d.resource, d.treatment_mean)}"
    unknown = f"; unknown for {d.n_unknown} more" if d.n_unknown else ""
    return f"{label} {change} ({means}, {d.n_pairs} pairs{unknown})"


def tradeoff_line(resources: ResourceComparison, comparison: PairComparison | None) -> str:
    """The treatment's score change and what it costs, in one line."""
    head = f"{resources.treatment} vs {resources.control}: "
    composite = comparison.metrics.get("composite") if comparison is not None else None
    if composite is not None and composite.diff.estimate is not None:
        interval = getattr(composite.diff, composite.decision_ci)  # as the comparison decides
        lo, hi = interval.low, interval.high
        ci = f" [{lo:+.2f}, {hi:+.2f}]" if lo is not None and hi is not None else ""
        head += f"{composite.diff.estimate:+.2f} points{ci} · "
    return head + " · ".join(resource_phrase(d) for d in resources.resources)


def tradeoff_lines(resources: list[ResourceComparison] | None, comparisons: list[PairComparison] | None) -> list[str]:
    """``tradeoff_line`` for every treatment of a report (none for a run without a control)."""
    by_treatment = {c.treatment: c for c in comparisons or []}
    return [tradeoff_line(r, by_treatment.get(r.treatment)) for r in resources or []]


#: What the trade-off lines' intervals are, said once above them.
TRADEOFF_HEADER = (
    "Trade-off (paired by sample and repeat, tasks both arms finished; cost, latency and tokens as the relative "
    "change of the mean with a 95% percentile bootstrap CI, resampled by sample)"
)
