"""Aggregates per variant (spec §5) and the watermark that must travel with every gap rate (§7.1)."""

from __future__ import annotations

import json

import pytest

from knowmeter.analysis import (
    SOFT_SIGNAL_NOTE,
    GapSignal,
    GapSummary,
    TaskGaps,
    aggregate_gaps,
    confidence_tier,
    render_inventory,
)
from knowmeter.samples import WATERMARK_WARNING


def _task(sid, *sources, ok=True, repeat=0, mode="regex-only"):
    sigs = tuple(
        GapSignal(sample_id=sid, turn=i + 1, source=src, target=f"t{i}", context=f"c{i}")
        for i, src in enumerate(sources)
    )
    return TaskGaps(sample_id=sid, repeat=repeat, ok=ok, signals=sigs if ok else (), hedging_mode=mode)


def test_spec_example_5_of_12(watermark):
    tasks = [_task(f"s{i}", "failed_search") for i in range(5)] + [_task(f"s{i}") for i in range(5, 12)]
    s = aggregate_gaps(tasks, watermark, variant="treatment")
    assert (s.executed, s.samples_with_gap) == (12, 5)
    assert s.gap_rate == pytest.approx(5 / 12)
    assert s.weighted_gap_rate == pytest.approx(5 / 12)
    assert s.confidence == "low"
    assert s.soft_signal_note is None


def test_weighted_rate_takes_each_samples_strongest_signal(watermark):
    tasks = [_task("a", "failed_search", "hedging"), _task("b", "hedging", "explicit_marker"), _task("c")]
    s = aggregate_gaps(tasks, watermark)
    assert s.gap_rate == pytest.approx(2 / 3)
    assert s.weighted_gap_rate == pytest.approx((1.0 + 0.5 + 0) / 3)
    assert s.gap_rate is not None and s.weighted_gap_rate is not None
    assert s.weighted_gap_rate <= s.gap_rate
    assert s.signals_by_source == {"failed_search": 1, "explicit_marker": 1, "hedging": 2, "repeated_failure": 0}
    assert s.samples_by_source == {"failed_search": 1, "explicit_marker": 1, "hedging": 2, "repeated_failure": 0}


def test_failed_executions_leave_the_denominator_and_are_counted(watermark):
    tasks = [_task("a", "failed_search"), _task("b"), _task("c", ok=False), _task("d", ok=False)]
    s = aggregate_gaps(tasks, watermark)
    assert (s.executed, s.failed_executions) == (2, 2)
    assert s.gap_rate == pytest.approx(0.5)


def test_nothing_executed_gives_no_rate_rather_than_zero(watermark):
    s = aggregate_gaps([_task("a", ok=False)], watermark)
    assert s.gap_rate is None and s.weighted_gap_rate is None
    assert "n/a" in s.headline()


@pytest.mark.parametrize(
    ("n", "tier"), [(0, "underpowered"), (4, "underpowered"), (5, "low"), (19, "low"), (20, "high")]
)
def test_confidence_tiers(n, tier):
    assert confidence_tier(n) == tier


def test_tier_counts_distinct_samples_not_repeats(watermark):
    tasks = [_task("a", repeat=r) for r in range(10)]
    s = aggregate_gaps(tasks, watermark)
    assert (s.executed, s.samples, s.confidence) == (10, 1, "underpowered")


def test_soft_signal_note_at_ten_points(watermark):
    # 5 samples: 1 hard, 1 soft → gap 0.4, weighted 0.3: difference exactly 0.10
    tasks = [_task("a", "failed_search"), _task("b", "hedging"), _task("c"), _task("d"), _task("e")]
    s = aggregate_gaps(tasks, watermark)
    assert s.gap_rate is not None and s.weighted_gap_rate is not None
    assert s.gap_rate - s.weighted_gap_rate == pytest.approx(0.10)
    assert s.soft_signal_note == SOFT_SIGNAL_NOTE
    tasks[1] = _task("b", "repeated_failure")
    assert aggregate_gaps(tasks, watermark).soft_signal_note is None


def test_hedging_mode_is_reported(watermark):
    assert aggregate_gaps([_task("a")], watermark).hedging_mode == "regex-only"
    assert aggregate_gaps([_task("a", mode="regex+llm")], watermark).hedging_mode == "regex+llm"
    assert aggregate_gaps([_task("a"), _task("b", mode="regex+llm")], watermark).hedging_mode == "mixed"


# --- the watermark ----------------------------------------------------------------------------------


def test_a_gap_summary_cannot_be_built_without_a_watermark(watermark):
    good = aggregate_gaps([_task("a")], watermark).to_dict()
    for broken in (
        {k: v for k, v in good.items() if k != "watermark"},
        {**good, "watermark": None},
        {**good, "watermark": {"paths": ["x"]}},
    ):
        with pytest.raises(ValueError, match="watermark"):
            GapSummary.from_dict(broken)
    with pytest.raises(TypeError):
        aggregate_gaps([_task("a")])  # type: ignore[call-arg]


def test_serialised_summary_always_embeds_the_full_watermark(watermark):
    s = aggregate_gaps([_task("a", "failed_search"), _task("b")], watermark, variant="v")
    d = json.loads(json.dumps(s.to_dict()))
    assert d["watermark"]["paths"] == ["eval-samples.yaml"]
    assert d["watermark"]["count"] == 12
    assert d["watermark"]["short"] == "1a2b3c4d"
    assert d["watermark"]["warning"] == WATERMARK_WARNING
    assert GapSummary.from_dict(d) == s


def test_every_printed_rate_carries_the_watermark(watermark):
    s = aggregate_gaps(
        [_task("s003", "failed_search"), _task("s007", "explicit_marker")], watermark, variant="treatment"
    )
    text = render_inventory(s)
    lines = text.splitlines()
    rate_line = next(i for i, line in enumerate(lines) if line.startswith("gap rate"))
    assert lines[rate_line + 1] == "sample set eval-samples.yaml · 12 samples · 1a2b3c4d"
    assert lines[rate_line + 2] == f"⚠ {WATERMARK_WARNING}"
    assert s.lines()[1:] == lines[rate_line + 1 : rate_line + 3]


def test_inventory_in_spec_style(watermark):
    fs = GapSignal(
        sample_id="s003",
        turn=4,
        source="failed_search",
        tool="Grep",
        target="revenue_schema",
        context='Grep "revenue_schema" → no results',
        note="need to verify which domain the revenue field definitions live in",
    )
    mk = GapSignal(
        sample_id="s007",
        turn=2,
        source="explicit_marker",
        target="【推断】",
        context="【推断】this data should come from the user_profile table",
    )
    s = aggregate_gaps(
        [
            TaskGaps(sample_id="s007", signals=(mk,)),
            TaskGaps(sample_id="s003", signals=(fs,)),
            TaskGaps(sample_id="s001"),
        ],
        watermark,
        variant="treatment",
    )
    text = render_inventory(s)
    assert "Knowledge-gap inventory — treatment" in text
    assert "gap rate 66.7% (2/3) · weighted 50.0% · confidence underpowered" in text
    assert "by source: failed search 1 · explicit marker 1 · hedging 0 · repeated failure 0" in text
    assert (
        'Sample s003 / turn 4 / [failed search]\n  Grep "revenue_schema" → no results\n'
        "  agent then said: need to verify which domain the revenue field definitions live in"
    ) in text
    assert "Sample s007 / turn 2 / [explicit marker]\n  agent output: 【推断】this data should come from" in text
    assert text.index("Sample s003") < text.index("Sample s007")
    assert "hedging: regex-only" in text


def test_inventory_limit_and_empty(watermark):
    tasks = [_task(f"s{i}", "failed_search") for i in range(4)]
    assert "… 2 more signal(s)" in render_inventory(aggregate_gaps(tasks, watermark), limit=2)
    assert "No gap signals." in render_inventory(aggregate_gaps([_task("a")], watermark))


def test_signal_weight_is_fixed_by_source():
    assert GapSignal(sample_id="a", source="hedging").weight == 0.5
    with pytest.raises(ValueError, match=r"weight of a hedging signal is 0\.5"):
        GapSignal(sample_id="a", source="hedging", weight=1.0)


def test_a_tally_fed_the_gapless_tasks_first_aggregates_as_the_whole_list_does(watermark):
    """The report's gaps section tallies a task without signals as it is read (keeping only
    counts) and the tasks with signals afterwards, in the report's order: same summary."""
    from knowmeter.analysis import GapTally

    tasks = [
        _task("a", "failed_search", "hedging"),
        _task("b", mode="regex+llm"),
        _task("c", ok=False),
        _task("d", "explicit_marker"),
        _task("a", repeat=1),
        _task("e", "hedging", repeat=1),
    ]
    tally = GapTally()
    for t in [t for t in reversed(tasks) if not t.has_gap] + [t for t in tasks if t.has_gap]:
        tally.add(t)
    assert tally.done == len(tasks)
    assert tally.summary(watermark, variant="v") == aggregate_gaps(tasks, watermark, variant="v")
    assert tally.summary(watermark).samples == 4 and tally.summary(watermark).hedging_mode == "mixed"
