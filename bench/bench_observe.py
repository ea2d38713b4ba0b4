"""Benchmark: ``knowmeter observe`` on >= 100 MB of Claude Code session JSONL — MB/s and peak RSS.

Builds the corpus with ``bench_trace_parse.synthesise`` (copies of the real session files in
``shared/reference`` with fresh ids, each main session with a subagent transcript), then puts
skill starts into every main session — a typed ``/<skill>`` command a third of the way in and a
``Skill`` tool call two thirds of the way in, over five skill names — so the run exercises
segmentation, per-segment gap analysis and the per-skill merge. Runs ``knowmeter observe --json``
as a subprocess with ``--workers 1`` and ``--workers 2`` (timed runs), plus one run per setting
that samples the RSS of the whole process tree (psutil, every 20 ms; apart from the timed runs,
since on two cores the sampler's own CPU would slow them), and repeats at twice the corpus size
to show that memory does not grow with it. Prints wall-clock MB/s (the fastest of ``--repeats``
runs) and MB per CPU-second of all its processes (more robust when other jobs share the
machine), and how many cores other jobs kept busy meanwhile: the wall clock means little unless
that is near 0. Target: >= 100 MB/s and <= 100 MB peak RSS (parent + workers).

    python bench/bench_observe.py [--mb 110] [--shared ../shared] [--repeats 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import cpu_reference
from bench_trace_parse import REPO, synthesise

SKILLS = ("review-pr", "pdf", "deploy", "release-notes-writer", "db-migrate")


def _line(rec: dict[str, object]) -> str:
    return json.dumps(rec, separators=(",", ":")) + "\n"


def add_skill_starts(root: Path) -> int:
    """Insert a slash command and a ``Skill`` call (with its result) into every main session; return
    the number of sessions changed."""
    changed = 0
    for n, path in enumerate(sorted((root / "projects").glob("*/*.jsonl"))):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if len(lines) < 6:
            continue
        first, second = SKILLS[n % len(SKILLS)], SKILLS[(n + 2) % len(SKILLS)]
        env = {
            "isSidechain": False,
            "userType": "external",
            "sessionId": path.stem,
            "version": "2.1.76",
            "cwd": "/tmp/bench/project",
        }
        command = _line(
            {
                **env,
                "type": "user",
                "uuid": f"bench-{n}-1",
                "timestamp": "2026-03-14T19:50:00.000Z",
                "message": {
                    "role": "user",
                    "content": f"<command-message>{first} is running…"
                    f"</command-message>\n<command-name>/{first}</command-name>",
                },
            }
        )
        call_id = f"toolu_bench{n:06d}"
        call = _line(
            {
                **env,
                "type": "assistant",
                "uuid": f"bench-{n}-2",
                "timestamp": "2026-03-14T19:55:00.000Z",
                "requestId": f"req_bench{n:06d}",
                "message": {
                    "model": "claude-opus-4-6",
                    "id": f"msg_bench{n:06d}",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": call_id, "name": "Skill", "input": {"skill": second}}],
                    "usage": {"input_tokens": 3, "output_tokens": 12},
                },
            }
        )
        result = _line(
            {
                **env,
                "type": "user",
                "uuid": f"bench-{n}-3",
                "timestamp": "2026-03-14T19:55:01.000Z",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": call_id, "content": f"Launching skill: {second}"}
                    ],
                },
                "toolUseResult": {"success": True, "commandName": second},
            }
        )
        a, b = len(lines) // 3, 2 * len(lines) // 3
        path.write_text("".join([*lines[:a], command, *lines[a:b], call, result, *lines[b:]]), encoding="utf-8")
        changed += 1
    return changed


class TreeRss:
    """Peak of the summed RSS of a process and its children, sampled in a thread."""

    def __init__(self, pid: int, every: float = 0.02) -> None:
        self.proc = psutil.Process(pid)
        self.every = every
        self.peak_total = self.peak_parent = self.peak_child = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                parent = self.proc.memory_info().rss
                children = []
                for c in self.proc.children(recursive=True):
                    with contextlib.suppress(psutil.Error):  # a worker that just exited
                        children.append(c.memory_info().rss)
            except psutil.Error:
                break
            mb = 1024 * 1024
            self.peak_parent = max(self.peak_parent, parent / mb)
            self.peak_child = max(self.peak_child, max(children, default=0) / mb)
            self.peak_total = max(self.peak_total, (parent + sum(children)) / mb)
            time.sleep(self.every)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _busy_cpu() -> float:
    """CPU seconds the whole machine has spent busy, less this process's own (the RSS sampler)."""
    t = psutil.cpu_times()
    own = psutil.Process().cpu_times()
    return float(sum(t) - t.idle - getattr(t, "iowait", 0.0) - own.user - own.system)


def run_observe(
    root: Path, workers: int, *, sample_rss: bool, folder: Path | None = None
) -> tuple[float, float, TreeRss | None, dict[str, object], float]:
    """One ``knowmeter observe --json`` run over ``folder`` (default ``root/projects``): wall
    seconds, CPU seconds (all its processes), the RSS sampler (when ``sample_rss``), the report,
    and the cores that other jobs kept busy meanwhile (their load slows the wall clock first)."""
    target = folder if folder is not None else root / "projects"
    cmd = [sys.executable, "-m", "knowmeter", "observe", str(target), "--json", "--workers", str(workers)]
    cpu0 = _children_cpu()
    busy0 = _busy_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
    )
    rss = TreeRss(proc.pid) if sample_rss else None
    out, err = proc.communicate()
    elapsed = time.perf_counter() - t0
    if rss is not None:
        rss.stop()
    if proc.returncode != 0:
        raise SystemExit(f"observe failed ({proc.returncode}): {err.strip()}")
    cpu = _children_cpu() - cpu0
    others = max(0.0, _busy_cpu() - busy0 - cpu) / elapsed
    return elapsed, cpu, rss, json.loads(out), others


def bench(size_mb: float, shared: Path, repeats: int) -> list[dict[str, float]]:
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="knowmeter-observe-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        size = synthesise(root, shared, size_mb)
        sessions = add_skill_starts(root)
        size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
        print(
            f"\ncorpus: {size / 1e6:.1f} MB of Claude Code session JSONL ({sessions} main sessions + subagents), "
            f"built in {time.perf_counter() - t0:.1f} s"
        )
        for workers in (1, 2):
            best: tuple[float, float, TreeRss | None, dict[str, object], float] | None = None
            for _ in range(repeats):
                res = run_observe(root, workers, sample_rss=False)
                if best is None or res[0] < best[0]:
                    best = res
            assert best is not None
            elapsed, cpu, _, report, others = best
            rss = run_observe(root, workers, sample_rss=True)[2]  # a run of its own: the sampler costs CPU
            assert rss is not None
            ts = report["trace_set"]
            assert isinstance(ts, dict)
            skills = report["skills"]
            assert isinstance(skills, list)
            mbps = size / 1e6 / elapsed
            print(
                f"  --workers {workers}: {elapsed:.2f} s -> {mbps:.1f} MB/s wall-clock, "
                f"{size / 1e6 / cpu:.1f} MB per CPU-second (all processes, start-up included); "
                f"peak RSS parent {rss.peak_parent:.1f} MB, largest worker {rss.peak_child:.1f} MB, "
                f"whole tree {rss.peak_total:.1f} MB "
                f"({ts['sessions']} sessions, {ts['segments']} segments, {len(skills)} skill rows; "
                f"other jobs kept {others:.2f} cores busy meanwhile)"
            )
            rows.append(
                {
                    "mb": size / 1e6,
                    "workers": workers,
                    "mbps": mbps,
                    "cpu": cpu,
                    "tree_rss": rss.peak_total,
                    "parent_rss": rss.peak_parent,
                    "worker_rss": rss.peak_child,
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=110.0, help="corpus size to synthesise (MB); also run at 2x")
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="the shared/ folder")
    ap.add_argument("--repeats", type=int, default=2, help="runs per setting (the fastest is reported)")
    args = ap.parse_args()
    reference_before = cpu_reference()
    rows = bench(args.mb, args.shared, args.repeats) + bench(2 * args.mb, args.shared, args.repeats)
    reference_after = cpu_reference()
    print()
    for workers in (1, 2):
        small, big = (r for r in rows if r["workers"] == workers)
        print(
            f"--workers {workers}: RSS {small['tree_rss']:.1f} MB at {small['mb']:.0f} MB vs "
            f"{big['tree_rss']:.1f} MB at {big['mb']:.0f} MB of traces"
        )
    two = [r for r in rows if r["workers"] == 2]
    ok = all(r["mbps"] >= 100 and r["tree_rss"] <= 100 for r in two)
    print(
        f"target (2 workers): >= 100 MB/s and <= 100 MB peak RSS of the whole process tree -> "
        f"{'OK' if ok else 'MISSED'}"
    )
    print(
        f"CPU speed reference (bench/_machine.py, lower is faster): {reference_before:.3f} s before, "
        f"{reference_after:.3f} s after"
    )
    kernel = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"(largest single process by the kernel's ru_maxrss: {kernel:.1f} MB)")


if __name__ == "__main__":
    main()
