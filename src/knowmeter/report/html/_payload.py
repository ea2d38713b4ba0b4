"""The per-sample detail embedded in the page as one JSON blob (rendered lazily by the page's
script), and its escaping for a ``<script type="application/json">`` element."""

from __future__ import annotations

import heapq
import json
from collections.abc import Mapping
from typing import Any

import orjson

from knowmeter.report._rows import rank
from knowmeter.report._view import ReportView, SampleRow, TaskView

#: a prompt or message longer than this is cut (the cut is stated on the page)
TOOL_TEXT_LIMIT = 2000
#: a tool call's input or result longer than this is cut in the timeline (the cut is stated)
STEP_TEXT_LIMIT = 400
#: an agent output longer than this is cut (the cut is stated on the page)
OUTPUT_LIMIT = 20000
#: the page embeds the detail of at most this many sample × repeat rows (the page says how many
#: of how many; report.json holds every task)
DETAIL_ROWS = 2000
#: ... and at most this many bytes of their JSON without the traces, then at most TRACE_BYTES of
#: traces (rows by :func:`row_rank`): bench_html's 5,000 samples × 2 variants × 3 repeats with
#: 10–30 tool calls a task stay within its targets (≤ 5 MB, interactive ≤ 1.5 s)
DETAIL_BYTES = 2_000_000
TRACE_BYTES = 2_300_000

_SEARCH_TOOLS = frozenset({"grep", "glob", "search", "websearch", "web_search", "find", "rg", "ls"})


def _cut(text: str, limit: int) -> list[Any]:
    """[text, characters left out]."""
    return [text[:limit], max(len(text) - limit, 0)]


#: how the timeline names a tool result whose error kind says more than its status (a search that
#: ran and found nothing has status "success": the gap analysis counts it as failed)
_ERROR_WORDS = {
    "empty_search": "failed: no results",
    "not_found": "failed: not found",
    "nonzero_exit": "failed: non-zero exit",
}


def _status_text(status: str, error_kind: Any) -> str:
    if error_kind is None:
        return status
    return _ERROR_WORDS.get(str(error_kind), f"{status} · {error_kind}")


def _timeline(task: TaskView) -> list[dict[str, Any]]:
    """Tool calls paired with their results, in trace order; messages kept as plain steps."""
    results = {ev.get("id"): ev for ev in task.events if ev.get("kind") == "tool_result"}
    steps: list[dict[str, Any]] = []
    for ev in task.events:
        kind = ev.get("kind")
        if kind == "tool_call":
            res = results.get(ev.get("id")) or {}
            tool = str(ev.get("tool", "?"))
            status = str(res.get("status", "no result"))
            error_kind = res.get("error_kind")
            failed = status != "success" or error_kind is not None
            raw = ev.get("input")
            steps.append(
                {
                    "k": "call",
                    "tool": tool,
                    "in": _cut(raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False), STEP_TEXT_LIMIT),
                    "out": _cut(str(res.get("output") or ""), STEP_TEXT_LIMIT),
                    "st": _status_text(status, error_kind),
                    "fail": failed,
                    "fs": failed and (tool.lower() in _SEARCH_TOOLS or error_kind == "empty_search"),
                    "turn": ev.get("turn"),
                }
            )
        elif kind == "message":
            steps.append(
                {
                    "k": "msg",
                    "role": str(ev.get("role", "?")),
                    "text": _cut(str(ev.get("text") or ""), TOOL_TEXT_LIMIT),
                    "turn": ev.get("turn"),
                }
            )
    return steps


def _judge(j: Mapping[str, Any]) -> dict[str, Any]:
    raw = j.get("dimensions")
    dims: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    return {
        "judge": str(j.get("judge", "?")),
        "mean": j.get("mean"),
        "sd": j.get("sd"),
        "scores": j.get("scores") if isinstance(j.get("scores"), list) else [],
        "why": str(j.get("reasoning") or j.get("reason") or ""),
        "err": j.get("error"),
        "dims": [
            [str(name), d.get("mean"), str(d.get("reasoning") or d.get("reason") or "")]
            for name, d in dims.items()
            if isinstance(d, Mapping)
        ],
    }


def _task(task: TaskView) -> dict[str, Any]:
    return {
        "out": _cut(task.output, OUTPUT_LIMIT),
        "err": task.error,
        "c": task.composite,
        "ok": task.passed,
        "cached": task.cached,
        "cost": task.cost_usd,
        "ms": task.latency_ms,
        "as": [
            [
                str(a.get("type", "?")),
                a.get("passed"),
                str(a.get("message", "")),
                str(a.get("layer", "")),
                bool(a.get("negated")),
            ]
            for a in task.assertions
        ],
        "j": [_judge(j) for j in task.judges],
        "je": task.judge_error,
        "gaps": [s.get("context") or s["source"] for s in task.gap_signals],
        "tl": _timeline(task),
    }


def variant_order(view: ReportView) -> tuple[str | None, list[str]]:
    """(the control, or None when no variant has that role; the variants, the control first)."""
    names = [v.name for v in view.variants]
    control = next((v.name for v in view.variants if v.role == "control"), None)
    return control, ([control] if control is not None else []) + [n for n in names if n != control]


def payload(
    view: ReportView, *, limit: int = DETAIL_ROWS, budget: tuple[int, int] = (DETAIL_BYTES, TRACE_BYTES)
) -> dict[str, Any]:
    """What the sample table needs: variants (the control first), each one's role, the control
    (None when no variant has that role: nothing is compared), the detail of at most ``limit``
    sample × repeat rows within ``budget`` (bytes of JSON without traces, bytes of traces) — the
    first ``limit`` by :func:`row_rank`, then report order, and :func:`_within` of those; shown in
    the report's order. A report built from its run ranked its rows as it was built, so only the
    rows shown are read; one read from report.json reads every task once, holding at most
    ``limit`` rows. Also ``total``
    (every row of the report), ``shown`` (how many are in ``rows``) and ``traced`` (how many of
    those carry their traces; the others' ``tl`` is None)."""
    roles = {v.name: v.role for v in view.variants}
    control, order = variant_order(view)
    head = {"variants": order, "roles": roles, "control": control}
    index = view.row_index()
    if index is not None:  # ranked as the report was built: only the rows shown are read
        total = len(index)
        best = sorted(heapq.nsmallest(limit, range(total), key=lambda i: (index.ranks[i], i)))
        ranked = [(index.ranks[i], detail_row(row, order)) for i, row in zip(best, view.samples_at(best), strict=True)]
    else:
        total, ranked = _ranked(view, order, limit)
    rows, traced = _within(ranked, budget)
    return {**head, "rows": rows, "total": total, "shown": len(rows), "traced": traced}


def _ranked(view: ReportView, order: list[str], limit: int) -> tuple[int, list[tuple[int, dict[str, Any]]]]:
    """How many rows the report has, and the detail of the best ``limit`` by (rank, order), in
    the report's order, with their rank: one pass over the tasks, holding at most ``limit`` rows."""
    total = 0
    kept: list[tuple[int, int, dict[str, Any]]] = []  # a max-heap of the best ``limit`` rows, by (rank, order)
    for total, row in enumerate(view.samples(), start=1):
        place = (row_rank(row), total - 1)
        if len(kept) < limit:
            heapq.heappush(kept, (-place[0], -place[1], detail_row(row, order)))
        elif limit and place < (-kept[0][0], -kept[0][1]):
            heapq.heapreplace(kept, (-place[0], -place[1], detail_row(row, order)))
    return total, [(-r, data) for r, _, data in sorted(kept, key=lambda k: -k[1])]


def _within(ranked: list[tuple[int, dict[str, Any]]], budget: tuple[int, int]) -> tuple[list[dict[str, Any]], int]:
    """The rows (in report order) whose JSON fits the first byte budget, taken by rank; the
    traces of those that fit the second, by rank too (a row over it keeps ``tl`` None); and how
    many rows kept their traces."""
    text_left, trace_left = budget
    keep: list[bool] = [False] * len(ranked)
    traced = 0
    for i in sorted(range(len(ranked)), key=lambda k: ranked[k][0]):
        tasks = ranked[i][1]["v"].values()
        traces = [orjson.dumps(t["tl"]) for t in tasks]
        size = len(orjson.dumps(ranked[i][1])) - sum(len(t) for t in traces)
        if size > text_left:
            continue
        text_left -= size
        keep[i] = True
        if sum(len(t) for t in traces) <= trace_left:
            trace_left -= sum(len(t) for t in traces)
            traced += 1
        else:
            for t in tasks:
                t["tl"] = None
    return [row for (_, row), kept in zip(ranked, keep, strict=True) if kept], traced


def row_rank(row: SampleRow) -> int:
    """How much a row needs a reviewer (``report._rows.rank`` of its tasks' flags): 0 the
    variants disagree, 1 an execution error, a judge error or a failed assertion, 2 a gap signal
    (the gap inventory links to it), 3 the rest."""
    return rank(t.flags for t in row.tasks.values())


def detail_row(row: SampleRow, order: list[str]) -> dict[str, Any]:
    """A row's detail as the page's script reads it: id, repeat, prompt and each variant's task in
    ``order`` (output, error, assertions, judges, gap signals, trace timeline)."""
    prompt = next((t.prompt for t in row.tasks.values() if t.prompt), None)
    return {
        "id": row.sample_id,
        "r": row.repeat,
        "prompt": _cut(prompt or "", TOOL_TEXT_LIMIT),
        "v": {name: _task(row.tasks[name]) for name in order if name in row.tasks},
    }


_SCRIPT_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def script_json(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` survives,
    so no ``</script>`` or ``<!--`` in the data can end or alter the element."""
    text = orjson.dumps(data).decode()
    for char, escape in _SCRIPT_ESCAPES:
        text = text.replace(char, escape)
    return text
