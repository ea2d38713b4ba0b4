"""Shards: a deterministic part of a run's plan, so one evaluation can be split over the jobs of a
CI matrix (``knowmeter eval --shard I/N``) and merged back (``knowmeter merge``).

Assignment: a sample's tasks (every variant, every repeat) always go to the same shard, so the
pairs the comparison aligns stay whole. Samples are taken in plan order (the sample files'
order) by descending task count and each is given to the shard with the fewest tasks so far,
the lowest shard number on a tie (greedy longest-processing-time). Every sample has the same
number of tasks (variants × repeats), so this deals samples out in turn: shard sizes differ by
at most one sample's tasks, and the result depends only on the plan, never on the machine.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from knowmeter.errors import InputError
from knowmeter.runner._plan import Task

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based: ``1/3``, ``2/3``, ``3/3``)."""

    index: int
    count: int

    @classmethod
    def parse(cls, spec: str) -> Shard:
        """``"I/N"`` with 1 ≤ I ≤ N; anything else is an ``InputError`` saying what to write."""
        m = _SPEC.fullmatch(spec)
        if m is None or not 1 <= int(m[1]) <= int(m[2]):
            raise InputError(
                f"--shard {spec!r}: expected I/N with 1 <= I <= N, e.g. --shard 2/3 (the second of three shards)"
            )
        return cls(int(m[1]), int(m[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def assign_samples(tasks: list[Task], count: int) -> dict[str, int]:
    """The shard (1-based) of each sample id of the plan ``tasks`` (see the module's docstring)."""
    weights = Counter(t.sample.sample_id for t in tasks)  # insertion order = plan order
    load = [0] * count
    shard_of: dict[str, int] = {}
    for sample_id in sorted(weights, key=lambda s: -weights[s]):  # stable: plan order on ties
        lightest = min(range(count), key=lambda i: (load[i], i))
        shard_of[sample_id] = lightest + 1
        load[lightest] += weights[sample_id]
    return shard_of


def shard_tasks(tasks: list[Task], shard: Shard) -> list[Task]:
    """The tasks of ``shard``, in plan order; an ``InputError`` when the plan has fewer samples
    than shards (a shard would hold nothing to measure)."""
    shard_of = assign_samples(tasks, shard.count)
    if len(shard_of) < shard.count:
        raise InputError(
            f"--shard {shard}: the plan has {len(shard_of)} sample(s), fewer than {shard.count} "
            f"shards; split it into at most {len(shard_of)} shards"
        )
    return [t for t in tasks if shard_of[t.sample.sample_id] == shard.index]
