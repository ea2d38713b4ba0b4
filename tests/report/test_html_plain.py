"""The first screen's sentence (issue 33, point 7) from the stored figures, for the cases a real
report can hold: counts with and without repeats, no assertion, a difference that may be chance."""

from __future__ import annotations

import dataclasses
from typing import Any

from knowmeter.report._view import Comparison, Interval, MetricRow, VariantRow
from knowmeter.report.html._plain import comparison_sentence


def _variant(name: str, passed: int | None, n: int | None, samples: int | None, composite: float | None) -> VariantRow:
    fields: dict[str, Any] = {f.name: None for f in dataclasses.fields(VariantRow)}
    fields.update(
        name=name,
        layer_means={"composite": composite},
        pass_rate_counts=(passed, n),
        pass_rate_samples=samples,
        pass_rate_ci=(None, None),
    )
    return VariantRow(**fields)


def _comparison(significant: bool | None) -> Comparison:
    diff = Interval(estimate=0.4, low=-0.1, high=0.9, method="bca", level=0.95, b=100, seed=1)
    metric = MetricRow("composite", 23, 3.0, 3.4, diff, 0.2, significant, 0.3, 0.5, 40, 0)
    return Comparison("base", "new", True, None, [metric], [], None, [])


def test_counts_per_sample_and_chance() -> None:
    variants = {"base": _variant("base", 11, 23, 23, 3.0), "new": _variant("new", 20, 23, 23, 3.4)}
    assert comparison_sentence(_comparison(True), variants) == (
        "The treatment new answered 20 of 23 samples correctly vs 11 of 23 for the control base; "
        "the difference is larger than chance."
    )
    assert comparison_sentence(_comparison(False), variants).endswith(
        "the difference could be chance (the paired test did not find it significant)."
    )
    assert "is unknown" in comparison_sentence(_comparison(None), variants)


def test_repeats_count_answers_and_no_assertion_falls_back_to_scores() -> None:
    variants = {"base": _variant("base", 30, 69, 23, 3.0), "new": _variant("new", 60, 69, 23, 3.4)}
    assert "answered 60 of 69 answers (23 samples, each repeated) correctly vs 30 of 69" in comparison_sentence(
        _comparison(True), variants
    )
    judged = {"base": _variant("base", None, None, None, 3.0), "new": _variant("new", None, None, None, 3.4)}
    assert comparison_sentence(_comparison(True), judged).startswith(
        "The treatment new scored 3.40 on average vs 3.00 for the control base"
    )
    unknown = {"base": _variant("base", None, None, None, None), "new": _variant("new", None, None, None, 3.4)}
    assert "composite unknown" in comparison_sentence(_comparison(True), unknown)
