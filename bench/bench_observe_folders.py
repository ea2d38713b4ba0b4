"""Benchmark: ``knowmeter observe`` on real log folders — MB/s and peak RSS, and where the time goes.

Two folders, both real bytes (prints numbers; not a test):

- ``corpus``: ``shared/reference/traces-corpus`` as it is (156 Claude stream-json logs of a real
  workflow and 6 Python-repr logs it skips);
- ``small``: many small files — the corpus logs under 40 KB copied ``--copies`` times into one
  folder per copy (a projects folder of many short sessions), so per-file costs dominate.

Each runs ``knowmeter observe --json`` as a subprocess with ``--workers 1`` and ``--workers 2``
(fastest of ``--repeats``; wall-clock MB/s and MB per CPU-second of all its processes, the latter
being what to compare on a machine other jobs share), and once more under a sampler for the peak
RSS of the process tree. Then one in-process profiled run (``--workers 1``) splits the CPU time
into stages: file reading + JSON parsing, segmentation, gap analysis (search signals, hedging,
the rest), coverage, the merge and report.

    python bench/bench_observe_folders.py [--shared ../shared] [--copies 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_observe import run_observe

REPO = Path(__file__).resolve().parents[1]

#: Functions whose cumulative time makes up each stage of the profiled run (file:function).
STAGES = {
    "scan, all (per file: read, parse, segment, analyse)": ("_scan.py:scan_session",),
    "read + parse (JSON, trace events)": ("_runs.py:load_first_run", "_claude_session.py:events", "_detect.py:sniff"),
    "segmentation": ("_segment.py:segment_events",),
    "gap analysis, all (analyze_task)": ("_task.py:analyze_task",),
    "failed searches + repeated failures": ("_searches.py:search_signals",),
    "retried commands": ("_retries.py:retry_signals",),
    "hedging + explicit markers": ("_phrases.py:hedging_scan", "_phrases.py:marker_signals"),
    "coverage (reads)": ("_coverage.py:accessed_files",),
    "merge + report": ("_merge.py:report",),
}


def _small_folder(corpus: Path, dest: Path, copies: int) -> int:
    """``copies`` folders holding every corpus log under 40 KB; the number of files."""
    small = [p for p in sorted(corpus.rglob("*.txt")) if p.stat().st_size < 40_000]
    for n in range(copies):
        folder = dest / f"run-{n:03d}"
        folder.mkdir(parents=True)
        for p in small:
            shutil.copyfile(p, folder / p.name)
    return copies * len(small)


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _timed(root: Path, label: str, repeats: int) -> None:
    size = _size(root) / 1e6
    files = sum(1 for p in root.rglob("*") if p.is_file())
    print(f"\n{label}: {files} files, {size:.1f} MB")
    for workers in (1, 2):
        best = min(
            (run_observe(root, workers, sample_rss=False, folder=root) for _ in range(repeats)), key=lambda r: r[0]
        )
        elapsed, cpu, _, report, others = best
        rss = run_observe(root, workers, sample_rss=True, folder=root)[2]
        assert rss is not None
        ts = report["trace_set"]
        assert isinstance(ts, dict)
        print(
            f"  --workers {workers}: {elapsed:.2f} s -> {size / elapsed:.1f} MB/s wall-clock, "
            f"{size / cpu:.1f} MB per CPU-second (all processes, start-up included), {files / elapsed:.0f} files/s; "
            f"peak RSS whole tree {rss.peak_total:.1f} MB (parent {rss.peak_parent:.1f}, largest worker "
            f"{rss.peak_child:.1f}); {ts['files']} read, {len(ts['skipped_files'])} skipped; "
            f"other jobs kept {others:.2f} cores busy meanwhile"
        )


def _profile(root: Path, label: str) -> None:
    from knowmeter.observe import observe

    prof = cProfile.Profile()
    prof.enable()
    observe([root], workers=1)
    prof.disable()
    stats = pstats.Stats(prof)
    total = max(v[3] for v in stats.stats.values())  # type: ignore[attr-defined]
    by_name: dict[str, float] = {}
    for (file, _, func), (_, _, _, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
        key = f"{Path(file).name}:{func}"
        by_name[key] = max(by_name.get(key, 0.0), cum)
    print(f"  where the time goes ({label}, --workers 1, in-process, under cProfile: {total:.2f} s):")
    for stage, names in STAGES.items():
        t = sum(by_name.get(n, 0.0) for n in names)
        print(f"    {stage:52} {t:6.2f} s  {t / total:5.1%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="the shared/ folder")
    ap.add_argument("--copies", type=int, default=40, help="copies of the small logs in the many-files folder")
    ap.add_argument("--repeats", type=int, default=3, help="runs per setting (the fastest is reported)")
    args = ap.parse_args()
    corpus = args.shared / "reference" / "traces-corpus"
    _timed(corpus, "corpus (traces-corpus, real logs)", args.repeats)
    _profile(corpus, "corpus")
    with tempfile.TemporaryDirectory(prefix="knowmeter-observe-folders-") as tmp:
        root = Path(tmp) / "small"
        _small_folder(corpus, root, args.copies)
        _timed(root, f"many small files (corpus logs < 40 KB × {args.copies})", args.repeats)
        _profile(root, "many small files")


if __name__ == "__main__":
    main()
