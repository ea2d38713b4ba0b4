"""Gap-analysis benchmark (prints numbers; not a test).

Part 1 — the real traces in ``shared/reference`` (every parseable one): signals by source per
file, as a readable table. Part 2 — throughput: ``analyze_task`` + ``accessed_files`` over all of
them repeated ``--repeat`` times, then one synthetic long trace (``--events`` events: a chatty
agent with many searches, failures and hedged prose) to show the cost stays linear. Target:
≥ 500 real traces/s and ≥ 10k synthetic events/s on one core (a results line costs far less
than the agent run that produced it).

    python bench/bench_gaps.py [--repeat 50] [--events 200000]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from knowmeter.analysis import SOURCES, accessed_files, aggregate_gaps, analyze_task
from knowmeter.errors import InputError
from knowmeter.samples import Watermark
from knowmeter.traces import ErrorKind, MessageEvent, ToolCallEvent, ToolResultEvent, ToolStatus, Trace, load_trace

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "reference"


def real_traces() -> list[tuple[str, Trace]]:
    paths = sorted((SHARED / "traces").glob("*/*.jsonl")) + sorted(
        (SHARED / "agent-clis" / "captures").glob("*/stdout.jsonl")
    )
    out: list[tuple[str, Trace]] = []
    for p in paths:
        try:
            out.append((str(p.relative_to(SHARED)), load_trace(p)))
        except InputError:
            continue
    return out


def synthetic(n_events: int) -> Trace:
    events: list[MessageEvent | ToolCallEvent | ToolResultEvent] = []
    i = 0
    while len(events) < n_events:
        turn = i // 3 + 1
        events.append(
            MessageEvent(
                "assistant",
                f"Step {i}. It is likely in module_{i % 50}, but I'm not sure. "
                f"See `code_{i}` and the table.\n| a | b |\n|---|---|",
                turn,
            )
        )
        cid = f"c{i}"
        if i % 4 == 0:
            events.append(ToolCallEvent(cid, "Grep", {"pattern": f"term_{i % 97}"}, turn))
            events.append(
                ToolResultEvent(cid, "No matches found", ToolStatus.SUCCESS, turn, error_kind=ErrorKind.EMPTY_SEARCH)
            )
        elif i % 4 == 1:
            events.append(ToolCallEvent(cid, "Bash", {"command": f"cat docs/page_{i % 31}.md | head -20"}, turn))
            events.append(ToolResultEvent(cid, "# Page\ntext", ToolStatus.SUCCESS, turn, exit_code=0))
        elif i % 4 == 2:
            events.append(ToolCallEvent(cid, "Read", {"file_path": f"/ws/docs/missing_{i % 13}.md"}, turn))
            events.append(
                ToolResultEvent(cid, "File does not exist.", ToolStatus.FAILURE, turn, error_kind=ErrorKind.NOT_FOUND)
            )
        else:
            events.append(ToolCallEvent(cid, "Bash", {"command": f"rg -n 'x{i}' src || true"}, turn))
            events.append(ToolResultEvent(cid, "src/a.py:1:x", ToolStatus.SUCCESS, turn, exit_code=0))
        i += 1
    return Trace(events=events, source="synthetic", meta={"cwd": "/ws"})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--events", type=int, default=200_000)
    args = ap.parse_args()

    traces = real_traces()
    print(f"{'trace':<100} " + " ".join(f"{s[:14]:>14}" for s in SOURCES) + "  excluded")
    tasks = []
    for name, trace in traces:
        gaps = analyze_task(trace, sample_id=name)
        tasks.append(gaps)
        by = Counter(s.source for s in gaps.signals)
        print(f"{name[-100:]:<100} " + " ".join(f"{by[s]:>14}" for s in SOURCES) + f"  {gaps.excluded}")
    wm = Watermark(("reference-traces",), len(tasks), "0" * 64)
    summary = aggregate_gaps(tasks, wm, variant="reference")
    print(summary.headline())

    n_events = sum(len(t.events) for _, t in traces) * args.repeat
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        for name, trace in traces:
            analyze_task(trace, sample_id=name)
            accessed_files(trace, "/ws")
    dt = time.perf_counter() - t0
    count = len(traces) * args.repeat
    print(f"real traces: {count} analyses in {dt:.2f}s → {count / dt:,.0f} traces/s, {n_events / dt:,.0f} events/s")

    big = synthetic(args.events)
    t0 = time.perf_counter()
    gaps = analyze_task(big, sample_id="big", workspace_root="/ws")
    access = accessed_files(big, "/ws")
    dt = time.perf_counter() - t0
    by = Counter(s.source for s in gaps.signals)
    print(
        f"synthetic: {len(big.events):,} events in {dt:.2f}s → {len(big.events) / dt:,.0f} events/s; "
        f"signals {dict(by)}; files read {len(access)}"
    )


if __name__ == "__main__":
    main()
