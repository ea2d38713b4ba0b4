"""``knowmeter._record``: the JSON form of frozen records and the checks that read it back."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any, ClassVar, Literal

import pytest

from knowmeter._record import AtLeast, AtMost, Record
from knowmeter.analysis import GapSignal, GapSummary, HedgingVerdict, TaskGaps, aggregate_gaps
from knowmeter.watermark import WATERMARK_WARNING, Watermark


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Inner(Record):
    name: str
    share: Annotated[float, AtLeast(0), AtMost(1)] = 0.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Outer(Record):
    kind: Literal["a", "b"]
    count: Annotated[int, AtLeast(0)]
    note: str | None = None
    items: tuple[Inner, ...] = ()
    by_name: dict[str, int] = dataclasses.field(default_factory=dict)
    first: Inner | None = None
    extra: Any = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class KeepsNone(Record):
    omit_none: ClassVar[bool] = False

    inner: Outer
    rate: float | None


WM = Watermark(("eval-samples.yaml",), 12, "1a2b3c4d" + "0" * 56)


def test_round_trip_through_json_gives_an_equal_record():
    rec = Outer(
        kind="b",
        count=3,
        items=(Inner(name="x", share=0.5), Inner(name="y")),
        by_name={"x": 1},
        first=Inner(name="z"),
        extra={"any": [1, 2]},
    )
    d = json.loads(json.dumps(rec.to_dict()))
    assert d["items"] == [{"name": "x", "share": 0.5}, {"name": "y", "share": 0.0}]
    assert "note" not in d  # None left out by default
    assert Outer.from_dict(d) == rec
    assert isinstance(Outer.from_dict(d).items, tuple)


def test_omit_none_false_keeps_unknown_values_as_null_all_the_way_down():
    d = KeepsNone(inner=Outer(kind="a", count=0), rate=None).to_dict()
    assert d == {
        "inner": {"kind": "a", "count": 0, "note": None, "items": [], "by_name": {}, "first": None, "extra": None},
        "rate": None,
    }
    assert KeepsNone.from_dict(d) == KeepsNone(inner=Outer(kind="a", count=0), rate=None)


def test_a_field_without_default_that_is_none_reads_back_after_to_dict_left_it_out():
    """A variant that ran no task has no gap rate: ``to_dict`` leaves the None out, and reading
    report.json back said 'missing field(s) gap_rate' (the viewer answered 422)."""
    summary = aggregate_gaps([], WM, variant="ran nothing")
    assert summary.gap_rate is None and "gap_rate" not in summary.to_dict()
    assert GapSummary.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary
    # a required field that cannot be None is still required
    with pytest.raises(ValueError, match=r"GapSummary: missing field\(s\) executed"):
        GapSummary.from_dict({k: v for k, v in summary.to_dict().items() if k != "executed"})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "c", "count": 1}, "Outer.kind: expected one of 'a', 'b', got 'c'"),
        ({"kind": "a", "count": -1}, "Outer.count: must be >= 0, got -1"),
        ({"kind": "a", "count": True}, "Outer.count: expected a whole number, got True"),
        ({"kind": "a", "count": 1.5}, "Outer.count: expected a whole number, got 1.5"),
        ({"kind": "a"}, "Outer: missing field(s) count"),
        ({"kind": "a", "count": 1, "colour": "red"}, "Outer: unknown field(s) colour"),
        ({"kind": "a", "count": 1, "items": [{"name": "x", "share": 2}]}, "Outer.items[0].share: must be in [0, 1]"),
        ({"kind": "a", "count": 1, "items": [{"name": 3}]}, "Outer.items[0].name: expected a string, got 3"),
        ({"kind": "a", "count": 1, "items": {"name": "x"}}, "Outer.items: expected a list"),
        ({"kind": "a", "count": 1, "by_name": {"x": "1"}}, "Outer.by_name['x']: expected a whole number"),
        ({"kind": "a", "count": 1, "first": "x"}, "Outer.first: expected a mapping, got str"),
        ([1, 2], "Outer: expected a mapping, got list"),
    ],
)
def test_bad_json_names_the_field_in_one_line(data, message):
    with pytest.raises(ValueError) as err:
        Outer.from_dict(data)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_numbers_read_as_float_accept_whole_numbers():
    assert Inner.from_dict({"name": "x", "share": 1}).share == 1.0
    with pytest.raises(ValueError, match="expected a number"):
        Inner.from_dict({"name": "x", "share": "0.5"})


def test_watermark_fields_are_required_and_checked():
    summary = aggregate_gaps([TaskGaps(sample_id="a")], WM, variant="v")
    d = summary.to_dict()
    assert d["watermark"]["warning"] == WATERMARK_WARNING and d["watermark"]["id"] == "eval-samples.yaml@1a2b3c4d"
    assert GapSummary.from_dict(d) == summary
    with pytest.raises(ValueError, match=r"GapSummary\.watermark: a watermark needs 'count'"):
        GapSummary.from_dict({**d, "watermark": {"paths": ["x"], "sha256": "ab"}})
    with pytest.raises(ValueError, match=r"GapSummary\.watermark: a watermark is a mapping"):
        GapSummary.from_dict({**d, "watermark": None})


def test_signal_invariants_hold_when_read_back():
    hedge = GapSignal(
        sample_id="a", source="hedging", classifier_verdict=HedgingVerdict(is_uncertainty=True, confidence=0.7)
    )
    d = TaskGaps(sample_id="a", signals=(hedge,)).to_dict()
    assert d["signals"][0]["weight"] == 0.5 and "tool" not in d["signals"][0]
    assert TaskGaps.from_dict(d).signals[0] == hedge
    d["signals"][0]["weight"] = 1.0
    with pytest.raises(ValueError, match=r"TaskGaps\.signals.*weight of a hedging signal is 0\.5, not 1\.0"):
        TaskGaps.from_dict(d)
    with pytest.raises(ValueError, match="occurrences: must be >= 1"):
        GapSignal.from_dict({"sample_id": "a", "source": "failed_search", "occurrences": 0})


def test_records_are_frozen():
    rec = Inner(name="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.name = "y"  # type: ignore[misc]
