"""Search and filters over every sample row of a stored run (the viewer's answer for the rows
whose detail the page does not embed), and one row's detail on demand.

An index is built once per run from its tasks, read through ``ReportView``: one lowercase text of
every row (id, prompt, outputs, execution errors, assertion types and messages — what the page's
own search looks in, uncut) searched with ``str.find``, and per row the figures the filters and
sorts read. The same filters and the same sort keys as the page's script."""

from __future__ import annotations

import threading
import zlib
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from knowmeter.report import ReportView, SampleRow, TaskView
from knowmeter.report.html import detail_row, id_key, row_rank, variant_order

#: rows answered per request (the page asks for the next ones when the user wants more)
PAGE_ROWS = 200
#: what the status filter accepts
STATUSES = frozenset({"", "pass", "fail", "unknown", "error", "disagree", "assert", "gap"})
_SEP = "\x00"


@dataclass(frozen=True)
class _Task:
    """What the table, the filters and the sorts need of one task."""

    status: str
    composite: float | None
    err: str | None
    ok: bool | None
    gaps: tuple[str, ...]
    failed_assertion: bool


@dataclass(frozen=True)
class _Row:
    sample_id: str
    repeat: int
    tasks: dict[str, _Task]
    disagree: bool
    #: the row's tasks as the view read them (``SampleRow`` as JSON, compressed): its detail is
    #: made from them when asked for
    stored: bytes


def _status(ok: bool | None, err: str | None) -> str:
    return "error" if err else "pass" if ok is True else "fail" if ok is False else "unknown"


def _text(row: SampleRow) -> str:
    prompt = next((t.prompt for t in row.tasks.values() if t.prompt), None) or ""
    parts = [row.sample_id, prompt]
    for t in row.tasks.values():
        parts.append(t.output)
        if t.error:
            parts.append(t.error)
        parts.extend(f"{a.get('type', '?')} {a.get('message', '')}" for a in t.assertions)
    return "\n".join(parts).replace(_SEP, " ").lower()


@dataclass(frozen=True)
class Query:
    """A search with filters and a sort, as the page's script sends it."""

    text: str = ""
    variant: str = ""
    status: str = ""
    low: float | None = None
    high: float | None = None
    #: "" report order, "id", "repeat", "gaps", "delta" or "v:NAME" (that variant's composite)
    sort: str = ""
    descending: bool = False
    offset: int = 0


@dataclass
class RunIndex:
    """Every sample row of one run: its searchable text and the figures the filters read."""

    variants: list[str]
    control: str | None
    rows: list[_Row] = field(default_factory=list)
    _text: str = ""
    _starts: list[int] = field(default_factory=list)
    _where: dict[tuple[str, int], int] = field(default_factory=dict)
    #: per sort, each row's key (None: unknown), made at the sort's first use
    _keys: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def build(cls, view: ReportView) -> RunIndex:
        control, order = variant_order(view)
        index = cls(order, control)
        texts: list[str] = []
        at = 0
        for row in view.samples():
            tasks = {
                name: _Task(
                    _status(t.passed, t.error),
                    t.composite,
                    t.error,
                    t.passed,
                    tuple(s.get("context") or s["source"] for s in t.gap_signals),
                    bool(t.failed_assertions),
                )
                for name, t in row.tasks.items()
            }
            stored = zlib.compress(orjson.dumps(row), 1)
            index.rows.append(_Row(row.sample_id, row.repeat, tasks, row_rank(row) == 0, stored))
            text = _text(row)
            texts.append(text)
            index._starts.append(at)
            index._where[(row.sample_id, row.repeat)] = len(index.rows) - 1
            at += len(text) + 1
        index._text = _SEP.join(texts)
        return index

    def _found(self, needle: str) -> list[int]:
        """The rows whose text holds ``needle`` (lowercase), in report order."""
        found: list[int] = []
        at = self._text.find(needle)
        while at >= 0:
            i = bisect_right(self._starts, at) - 1
            found.append(i)
            nxt = self._starts[i + 1] if i + 1 < len(self._starts) else len(self._text)
            at = self._text.find(needle, nxt)
        return found

    def _keep(self, q: Query) -> Callable[[_Row], bool]:
        names = [q.variant] if q.variant else self.variants

        def keep(row: _Row) -> bool:
            if q.variant and q.variant not in row.tasks:
                return False
            if q.status == "disagree" and not row.disagree:
                return False
            tasks = [row.tasks[n] for n in names if n in row.tasks]
            if (q.low is not None or q.high is not None) and not any(
                t.composite is not None
                and (q.low is None or t.composite >= q.low)
                and (q.high is None or t.composite <= q.high)
                for t in tasks
            ):
                return False
            if q.status in ("", "disagree"):
                return True
            if q.status == "gap":
                return any(t.gaps for t in tasks)
            if q.status == "assert":
                return any(t.failed_assertion for t in tasks)
            return any(t.status == q.status for t in tasks)

        return keep

    def _delta(self, row: _Row) -> float | None:
        treatment = self.variants[1] if self.control is not None and len(self.variants) > 1 else None
        c, t = row.tasks.get(self.control or ""), row.tasks.get(treatment or "")
        if c is None or t is None or c.composite is None or t.composite is None:
            return None
        return t.composite - c.composite

    def _sort_key(self, sort: str) -> Callable[[_Row], Any] | None:
        """The sort's key of a row (None: unknown, listed last), or None for report order;
        ``ValueError`` for a sort the table does not have."""
        if sort == "":
            return None
        if sort == "id":
            return lambda r: id_key(r.sample_id)
        if sort == "repeat":
            return lambda r: r.repeat
        if sort == "gaps":
            return lambda r: sum(len(t.gaps) for t in r.tasks.values())
        if sort == "delta":
            return self._delta
        if sort.startswith("v:") and sort[2:] in self.variants:
            name = sort[2:]
            return lambda r: r.tasks[name].composite if name in r.tasks else None
        raise ValueError(
            f"sort must be id, repeat, gaps, delta or v:VARIANT (one of {', '.join(self.variants)}), not {sort!r}"
        )

    def _sort_keys(self, sort: str) -> list[Any] | None:
        """Each row's key for ``sort`` (ids as their rank in id order), or None for report order."""
        key = self._sort_key(sort)
        if key is None:
            return None
        if sort not in self._keys:
            values = [key(r) for r in self.rows]
            if sort == "id":
                ranks = [0] * len(values)
                for rank, i in enumerate(sorted(range(len(values)), key=values.__getitem__)):
                    ranks[i] = rank
                values = ranks
            self._keys[sort] = values
        return self._keys[sort]

    def search(self, q: Query) -> dict[str, Any]:
        """``total`` rows in the run, ``matched`` by ``q``, and the light rows (what the table
        shows) of at most ``PAGE_ROWS`` of them from ``q.offset``, in ``q``'s order."""
        needle = q.text.strip().lower().replace(_SEP, " ")
        candidates = self._found(needle) if needle else range(len(self.rows))
        keep = self._keep(q)
        matched = [i for i in candidates if keep(self.rows[i])]
        keys = self._sort_keys(q.sort)
        if keys is not None:
            known = [i for i in matched if keys[i] is not None]
            unknown = [i for i in matched if keys[i] is None]
            known.sort(key=keys.__getitem__, reverse=q.descending)
            matched = known + unknown  # unknown last, whichever the direction
        page = matched[q.offset : q.offset + PAGE_ROWS]
        return {
            "total": len(self.rows),
            "matched": len(matched),
            "offset": q.offset,
            "rows": [self._light(self.rows[i]) for i in page],
        }

    @staticmethod
    def _light(row: _Row) -> dict[str, Any]:
        return {
            "id": row.sample_id,
            "r": row.repeat,
            "v": {
                name: {"ok": t.ok, "err": t.err, "c": t.composite, "gaps": list(t.gaps)}
                for name, t in row.tasks.items()
            },
        }

    def detail(self, sample_id: str, repeat: int) -> bytes | None:
        """The row's whole detail as JSON, as the page embeds it (traces included), or None."""
        i = self._where.get((sample_id, repeat))
        if i is None:
            return None
        raw = orjson.loads(zlib.decompress(self.rows[i].stored))
        row = SampleRow(raw["sample_id"], raw["repeat"], {n: TaskView(**t) for n, t in raw["tasks"].items()})
        return orjson.dumps(detail_row(row, self.variants))


def parse_query(params: Mapping[str, list[str]]) -> Query:
    """A ``Query`` from a URL's query; ``ValueError`` naming the bad field."""

    def one(name: str) -> str:
        return (params.get(name) or [""])[0]

    def number(name: str) -> float | None:
        raw = one(name).strip()
        if not raw:
            return None
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"{name} must be a number, not {raw!r}") from None

    status = one("status")
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(sorted(s for s in STATUSES if s))}, not {status!r}")
    offset = one("offset") or "0"
    if not offset.isdigit():
        raise ValueError(f"offset must be a whole number, not {offset!r}")
    return Query(
        text=one("q"),
        variant=one("variant"),
        status=status,
        low=number("min"),
        high=number("max"),
        sort=one("sort"),
        descending=one("dir") == "desc",
        offset=int(offset),
    )


class IndexCache:
    """The indexes of the last ``keep`` runs searched, each built again when its stored files
    change (``stamp``). One build at a time: requests for a run being indexed wait for it."""

    def __init__(self, keep: int = 4) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._items: OrderedDict[str, tuple[object, RunIndex]] = OrderedDict()

    def get(self, run_id: str, stamp: object, build: Callable[[], RunIndex]) -> RunIndex:
        with self._lock:
            hit = self._items.get(run_id)
            if hit is not None and hit[0] == stamp:
                self._items.move_to_end(run_id)
                return hit[1]
            index = build()
            self._items[run_id] = (stamp, index)
            self._items.move_to_end(run_id)
            while len(self._items) > self._keep:
                self._items.popitem(last=False)
            return index
