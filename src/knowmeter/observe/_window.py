"""The observation window: ``--last`` / ``--since`` / ``--until``, all in UTC.

``--last N<unit>`` (``m`` minutes, ``h`` hours, ``d`` days, ``w`` weeks) means "since now − N".
``--since`` / ``--until`` take an ISO date (``2026-03-14``) or datetime (``2026-03-14T09:30``,
``…Z``, ``…+02:00``); a datetime without an offset is UTC. The window is half-open,
``since <= t < until``; an ``--until`` given as a bare date includes that whole day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from knowmeter.errors import InputError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*$", re.I)
_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``since <= t < until`` (either bound may be open)."""

    since: datetime | None = None
    until: datetime | None = None

    @property
    def bounded(self) -> bool:
        return self.since is not None or self.until is not None

    def contains(self, when: datetime | None) -> bool:
        """Whether ``when`` lies in the window; an unknown time lies only in an unbounded one."""
        if when is None:
            return not self.bounded
        return (self.since is None or when >= self.since) and (self.until is None or when < self.until)

    def to_dict(self) -> dict[str, str | None]:
        return {"since": _iso(self.since), "until": _iso(self.until)}


def _iso(d: datetime | None) -> str | None:
    return d.isoformat().replace("+00:00", "Z") if d is not None else None


def parse_duration(text: str) -> timedelta:
    """``"7d"`` → 7 days (units m, h, d, w)."""
    m = _DURATION.match(text)
    if not m or float(m.group(1)) <= 0:
        raise InputError(f"--last {text!r}: not a duration; use a positive number and a unit, e.g. 30m, 12h, 7d, 2w")
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def parse_instant(text: str, *, option: str, end_of_day: bool = False) -> datetime:
    """An ISO date or datetime as an aware UTC datetime (a bare date with ``end_of_day``: the next midnight)."""
    raw = text.strip()
    try:
        if _DATE_ONLY.match(raw):
            d = datetime.combine(date.fromisoformat(raw), datetime.min.time(), tzinfo=UTC)
            return d + timedelta(days=1) if end_of_day else d
        when = datetime.fromisoformat(raw)
    except ValueError:
        raise InputError(
            f"{option} {text!r}: not an ISO date or datetime; use e.g. 2026-03-14 or 2026-03-14T09:30:00Z"
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def parse_timestamp(text: object) -> datetime | None:
    """A trace timestamp (ISO-8601, ``Z`` or offset) as an aware UTC datetime; None when absent or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def make_window(
    *, last: str | None = None, since: str | None = None, until: str | None = None, now: datetime | None = None
) -> TimeWindow:
    """The window the CLI options describe; ``--last`` and ``--since`` are exclusive."""
    if last is not None and since is not None:
        raise InputError("--last and --since both set the window's start; give only one of them")
    start = parse_instant(since, option="--since") if since is not None else None
    if last is not None:
        start = (now or datetime.now(UTC)) - parse_duration(last)
    end = parse_instant(until, option="--until", end_of_day=True) if until is not None else None
    if start is not None and end is not None and start >= end:
        raise InputError(
            f"the window is empty: --since/--last {_iso(start)} is not before --until {_iso(end)}; widen it"
        )
    return TimeWindow(start, end)
