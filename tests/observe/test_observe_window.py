"""The observation window: --last / --since / --until in UTC, half-open."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from knowmeter.errors import InputError
from knowmeter.observe import TimeWindow, make_window, parse_duration, parse_instant, parse_timestamp


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("30m", timedelta(minutes=30)),
        ("12h", timedelta(hours=12)),
        ("7d", timedelta(days=7)),
        ("2W", timedelta(weeks=2)),
        (" 1.5h ", timedelta(minutes=90)),
    ],
)
def test_durations(text: str, delta: timedelta) -> None:
    assert parse_duration(text) == delta


@pytest.mark.parametrize("text", ["7", "d", "0d", "-1d", "7y", "7 days"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(InputError, match="not a duration"):
        parse_duration(text)


def test_instants_are_utc() -> None:
    assert parse_instant("2026-03-14", option="--since") == datetime(2026, 3, 14, tzinfo=UTC)
    assert parse_instant("2026-03-14", option="--until", end_of_day=True) == datetime(2026, 3, 15, tzinfo=UTC)
    assert parse_instant("2026-03-14T09:30", option="--since") == datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
    assert parse_instant("2026-03-14T09:30:00+02:00", option="--since") == datetime(2026, 3, 14, 7, 30, tzinfo=UTC)
    assert parse_instant("2026-03-14T09:30:00Z", option="--until", end_of_day=True) == datetime(
        2026, 3, 14, 9, 30, tzinfo=UTC
    )  # only a bare date means the whole day
    with pytest.raises(InputError, match="--since 'last tuesday': not an ISO date"):
        parse_instant("last tuesday", option="--since")


def test_trace_timestamps() -> None:
    assert parse_timestamp("2026-03-10T10:00:00.391Z") == datetime(2026, 3, 10, 10, 0, 0, 391000, tzinfo=UTC)
    assert parse_timestamp("2026-03-10T12:00:00+02:00") == datetime(2026, 3, 10, 10, tzinfo=UTC)
    assert parse_timestamp("2026-03-10T10:00:00") == datetime(2026, 3, 10, 10, tzinfo=UTC)
    assert parse_timestamp("soon") is None and parse_timestamp(1760000000) is None and parse_timestamp("") is None


def test_window_is_half_open_and_unknown_times_fall_outside_a_bounded_one() -> None:
    w = TimeWindow(datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 2, tzinfo=UTC))
    assert w.contains(datetime(2026, 3, 1, tzinfo=UTC))
    assert not w.contains(datetime(2026, 3, 2, tzinfo=UTC))
    assert w.contains(datetime(2026, 3, 1, 23, tzinfo=timezone(timedelta(hours=-1)))) is False
    assert not w.contains(None) and TimeWindow().contains(None) and not TimeWindow().bounded
    assert w.to_dict() == {"since": "2026-03-01T00:00:00Z", "until": "2026-03-02T00:00:00Z"}


def test_make_window() -> None:
    now = datetime(2026, 3, 21, 12, tzinfo=UTC)
    assert make_window(last="1d", now=now) == TimeWindow(datetime(2026, 3, 20, 12, tzinfo=UTC))
    assert make_window(last="1w", until="2026-03-21", now=now) == TimeWindow(
        datetime(2026, 3, 14, 12, tzinfo=UTC), datetime(2026, 3, 22, tzinfo=UTC)
    )
    assert make_window() == TimeWindow()
    with pytest.raises(InputError, match="give only one of them"):
        make_window(last="1d", since="2026-03-01")
    with pytest.raises(InputError, match="the window is empty"):
        make_window(since="2026-03-02T00:00", until="2026-03-01")
