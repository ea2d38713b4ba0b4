"""The one pass over a run's task records: each report section is a fold that sees every stored
record once, in the order the file holds them, with the task's place in the report's order —
so its result does not depend on the order the tasks finished in."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from knowmeter.store import RunRecord, TaskRecord

#: A task's place in the report's order: (repeat, sample_id, variant).
TaskKey = tuple[int, str, str]
T = TypeVar("T")


class Section(Protocol):
    """An analysis section of report.json folded over the task records: ``add`` is called once per
    stored record (file order, with its ``TaskKey``), then ``result`` gives the report fields by
    name (``statistics``, ``gaps``, ``comprehension``, …)."""

    def add(self, key: TaskKey, task: TaskRecord) -> None: ...

    def result(self) -> dict[str, Any]: ...


#: A section made for a run (from its run.json record).
SectionBuilder = Callable[[RunRecord], Section]


class Ordered(Generic[T]):
    """Items gathered in any order, given back in the report's order. The keys are held as
    columns (a repeat number and two shared names: 24 bytes an item, not a tuple's 100)."""

    def __init__(self) -> None:
        self._repeats: array[int] = array("q")
        self._samples: list[str] = []
        self._variants: list[str] = []
        self._items: list[T] = []

    def add(self, key: TaskKey, item: T) -> None:
        repeat, sample, variant = key
        self._repeats.append(repeat)
        self._samples.append(sample)
        self._variants.append(variant)
        self._items.append(item)

    def __len__(self) -> int:
        return len(self._items)

    def _key(self, i: int) -> TaskKey:
        return self._repeats[i], self._samples[i], self._variants[i]

    def __iter__(self) -> Iterator[T]:
        return (self._items[i] for i in sorted(range(len(self._items)), key=self._key))


class First:
    """Labels counted with the first occurrence of each in the report's order: ``most_common``
    orders them as a ``Counter`` filled in report order would (count, then first seen)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[TaskKey, int, str]] = {}

    def add(self, key: TaskKey, label: str, detail: str = "") -> None:
        """Count ``label`` once; ``detail`` (its first message) is kept from its first occurrence."""
        at = self._seen.get(label)
        if at is None:
            self._seen[label] = (key, 1, detail)
        else:
            first, n, kept = at
            self._seen[label] = (key, n + 1, detail) if key < first else (first, n + 1, kept)

    def __contains__(self, label: str) -> bool:
        return label in self._seen

    def items(self) -> list[tuple[str, int, str]]:
        """(label, count, first detail), in the order of first occurrence."""
        return [(label, n, d) for label, (_, n, d) in sorted(self._seen.items(), key=lambda kv: kv[1][0])]

    def most_common(self, n: int) -> list[str]:
        return [label for label, _, _ in sorted(self.items(), key=lambda t: -t[1])[:n]]

    def first(self) -> str | None:
        """The detail of the first occurrence of any label (None when nothing was counted)."""
        items = self.items()
        return items[0][2] if items else None


class Shared:
    """One object for each distinct value given: a large run's tasks repeat few distinct score
    maps, layer lists or file-access counts, so the tasks that have equal ones share one."""

    def __init__(self) -> None:
        self._kept: dict[Hashable, Any] = {}

    def one(self, key: Hashable, value: T) -> T:
        """The first value given under ``key`` (equal values have equal keys)."""
        kept: T = self._kept.setdefault(key, value)
        return kept
