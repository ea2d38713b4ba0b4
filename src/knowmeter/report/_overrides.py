"""``knowmeter report`` overrides: the decision settings a stored run is re-decided with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T", int, float)


@dataclass(frozen=True, slots=True)
class ReportOverrides:
    """The ``knowmeter report`` flags (``api.rescore``): each replaces the run's own setting when
    given; None keeps the run's."""

    threshold: float | None = None
    seed: int | None = None
    bootstrap_samples: int | None = None
    max_mde: float | None = None
    min_pairs: int | None = None
    stability_limit: float | None = None


#: no override: the run is decided with its own settings
NO_OVERRIDES = ReportOverrides()


def given(override: T | None, stored: T) -> T:
    """``override`` when given, else the run's ``stored`` setting."""
    return stored if override is None else override
