"""Benchmark: parse speed (MB/s) and peak RSS of the Claude session-JSONL adapter.

Synthesises a Claude ``projects/`` folder of at least ``--mb`` MB by copying the real session
files of ``shared/reference`` (main sessions with a subagent transcript each) with fresh session,
line and message ids, then scans it with ``iter_claude_sessions`` in a child process and prints
MB/s and the child's peak RSS. Target for ``knowmeter observe``: >= 100 MB/s, <= 100 MB RSS.

    python bench/bench_trace_parse.py [--mb 120] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MSG_ID = re.compile(r'"(msg_|req_|toolu_)([0-9A-Za-z]+)"')


def _sources(shared: Path) -> tuple[list[Path], list[Path]]:
    ref = shared / "reference"
    mains = sorted((ref / "traces" / "claude-code-session-jsonl").glob("[0-9a-f]*-*.jsonl"))
    mains = [p for p in mains if "__subagents__" not in p.name]
    mains += sorted((ref / "agent-clis" / "captures").glob("claude_*/session/*.jsonl"))
    subs = sorted((ref / "traces" / "claude-code-session-jsonl").glob("*__subagents__agent-*.jsonl"))
    return mains, subs


def _fresh(text: str, n: int) -> str:
    """The same transcript with new UUIDs and message / request / tool ids (consistent within the copy)."""
    mapping: dict[str, str] = {}

    def new_uuid(m: re.Match[str]) -> str:
        return mapping.setdefault(m.group(0), str(uuid.uuid4()))

    text = _UUID.sub(new_uuid, text)
    return _MSG_ID.sub(lambda m: f'"{m.group(1)}{n:06d}{m.group(2)}"', text)


def synthesise(root: Path, shared: Path, target_mb: float) -> int:
    """Write copies under ``root/projects`` until ``target_mb`` is reached; return bytes written."""
    mains, subs = _sources(shared)
    main_texts = [p.read_text(encoding="utf-8") for p in mains]
    sub_texts = [p.read_text(encoding="utf-8") for p in subs]
    written = 0
    n = 0
    while written < target_mb * 1e6:
        project = root / "projects" / f"-tmp-bench-project-{n % 20}"
        project.mkdir(parents=True, exist_ok=True)
        for text in main_texts:
            n += 1
            session = str(uuid.uuid4())
            body = _fresh(text, n)
            (project / f"{session}.jsonl").write_text(body, encoding="utf-8")
            written += len(body.encode("utf-8"))
            for k, sub in enumerate(sub_texts):
                sub_dir = project / session / "subagents"
                sub_dir.mkdir(parents=True, exist_ok=True)
                sub_body = _fresh(sub, n * 100 + k)
                (sub_dir / f"agent-a{n:06d}{k}.jsonl").write_text(sub_body, encoding="utf-8")
                written += len(sub_body.encode("utf-8"))
    return written


def _count(session: Any) -> tuple[int, int, int, int]:
    events = calls = failures = 0
    for e in session.events():
        events += 1
        if e.kind == "tool_call":
            calls += 1
        elif e.kind == "tool_result" and e.status.value != "success":
            failures += 1
    return 1, events, calls, failures


def _scan_file(path: Path) -> tuple[int, int, int, int]:
    from knowmeter.traces import load_claude_session

    return _count(load_claude_session(path))


def scan(root: Path, repeats: int, workers: int) -> dict[str, float]:
    """Child-process side: scan every session ``repeats`` times (in ``workers`` processes, each
    session in one of them); count what the last scan parsed."""
    sys.path.insert(0, str(REPO / "src"))
    from knowmeter.traces import claude_session_files, iter_claude_sessions

    times: list[float] = []
    cpu: list[float] = []
    totals = [0, 0, 0, 0]
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), _cpu_seconds()
        if workers > 1:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                counts = list(pool.imap_unordered(_scan_file, claude_session_files(root), chunksize=4))
        else:
            counts = [_count(session) for session in iter_claude_sessions(root)]
        times.append(time.perf_counter() - t0)
        cpu.append(_cpu_seconds() - c0)
        totals = [sum(c[i] for c in counts) for i in range(4)]
    worker_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 if workers > 1 else 0.0
    return {
        "best": min(times),
        "median": statistics.median(times),
        "cpu": min(cpu),
        "sessions": totals[0],
        "events": totals[1],
        "calls": totals[2],
        "failures": totals[3],
        "worker_rss_mb": worker_rss,
    }


def _cpu_seconds() -> float:
    """CPU time of this process and its finished workers (wall time suffers on a shared machine)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=120.0, help="corpus size to synthesise (MB)")
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="the shared/ folder")
    ap.add_argument("--repeats", type=int, default=3, help="scans of the corpus (best and median reported)")
    ap.add_argument("--workers", type=int, default=1, help="processes sharing the scan (observe can use all cores)")
    ap.add_argument("--scan", type=Path, help=argparse.SUPPRESS)  # child mode
    args = ap.parse_args()
    if args.scan:
        print(json.dumps(scan(args.scan, args.repeats, args.workers)))
        return
    with tempfile.TemporaryDirectory(prefix="knowmeter-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        size = synthesise(root, args.shared, args.mb)
        print(f"corpus: {size / 1e6:.1f} MB of session JSONL in {time.perf_counter() - t0:.1f} s -> {root}")
        cmd = [
            sys.executable,
            __file__,
            "--scan",
            str(root),
            "--repeats",
            str(args.repeats),
            "--workers",
            str(args.workers),
        ]
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
        stats = json.loads(proc.stdout)
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        best, median = size / 1e6 / stats["best"], size / 1e6 / stats["median"]
        print(
            f"parsed {stats['sessions']:.0f} sessions, {stats['events']:.0f} events, "
            f"{stats['calls']:.0f} tool calls, {stats['failures']:.0f} non-success results"
        )
        print(
            f"parse speed ({args.workers} process{'es' if args.workers > 1 else ''}): best {best:.1f} MB/s, "
            f"median {median:.1f} MB/s wall-clock of {args.repeats} scans; "
            f"{size / 1e6 / stats['cpu']:.1f} MB per CPU-second"
        )
        if args.workers > 1:
            print(f"peak RSS: scanning parent {rss_mb:.1f} MB, each worker <= {stats['worker_rss_mb']:.1f} MB")
        else:
            print(f"peak RSS: {rss_mb:.1f} MB")
        total_rss = rss_mb + args.workers * stats["worker_rss_mb"]
        verdict = "OK" if best >= 100 and total_rss <= 100 else "MISSED"
        print(f"target: >= 100 MB/s and <= 100 MB RSS -> {verdict}")


if __name__ == "__main__":
    main()
