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
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

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


def scan(root: Path, repeats: int) -> dict[str, float]:
    """Child-process side: scan every session ``repeats`` times; count what the last scan parsed."""
    sys.path.insert(0, str(REPO / "src"))
    from knowmeter.traces import iter_claude_sessions

    times: list[float] = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        sessions = events = calls = failures = 0
        for session in iter_claude_sessions(root):
            sessions += 1
            for e in session.events():
                events += 1
                if e.kind == "tool_call":
                    calls += 1
                elif e.kind == "tool_result" and e.status.value != "success":
                    failures += 1
        times.append(time.perf_counter() - t0)
    return {"best": min(times), "median": statistics.median(times), "sessions": sessions, "events": events,
            "calls": calls, "failures": failures}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=120.0, help="corpus size to synthesise (MB)")
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="the shared/ folder")
    ap.add_argument("--repeats", type=int, default=3, help="scans of the corpus (best and median reported)")
    ap.add_argument("--scan", type=Path, help=argparse.SUPPRESS)  # child mode
    args = ap.parse_args()
    if args.scan:
        print(json.dumps(scan(args.scan, args.repeats)))
        return
    with tempfile.TemporaryDirectory(prefix="knowmeter-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        size = synthesise(root, args.shared, args.mb)
        print(f"corpus: {size / 1e6:.1f} MB of session JSONL in {time.perf_counter() - t0:.1f} s -> {root}")
        proc = subprocess.run([sys.executable, __file__, "--scan", str(root), "--repeats", str(args.repeats)],
                              check=True, capture_output=True, text=True)
        stats = json.loads(proc.stdout)
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        best, median = size / 1e6 / stats["best"], size / 1e6 / stats["median"]
        print(f"parsed {stats['sessions']:.0f} sessions, {stats['events']:.0f} events, "
              f"{stats['calls']:.0f} tool calls, {stats['failures']:.0f} non-success results")
        print(f"parse speed: best {best:.1f} MB/s, median {median:.1f} MB/s of {args.repeats} scans   "
              f"peak RSS: {rss_mb:.1f} MB")
        verdict = "OK" if best >= 100 and rss_mb <= 100 else "MISSED"
        print(f"target: >= 100 MB/s and <= 100 MB RSS -> {verdict}")

if __name__ == "__main__":
    main()
