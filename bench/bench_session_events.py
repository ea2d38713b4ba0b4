"""Benchmark: CPU seconds to turn Claude Code session JSONL into Trace IR events.

Runs ``ClaudeSessionReader.events(read_lines(path))`` over every ``*.jsonl`` under a folder (main
sessions and subagent files alike) and reports CPU seconds (``time.process_time``, median of
``--rounds``) and MB per CPU-second. ``orjson.loads`` over the lines the reader decodes is timed
too: it is the floor the adapter's own work sits on.

With ``--baseline-rev REV`` the trace adapters of that git revision are run as well, in the same
process, alternating with the current code on every chunk of 30 files: this VM's CPU speed drifts
up to 2x from minute to minute, so only such interleaved numbers compare. Without a folder, a
corpus of ``--mb`` MB is synthesised from ``shared/reference`` (``bench_trace_parse.synthesise``).

    python bench/bench_session_events.py [FOLDER] [--rounds 7] [--baseline-rev ffb5a5d] [--mb 110]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import cpu_reference
from bench_trace_parse import REPO, synthesise

_CHUNK = 30
_TRACES = "src/knowmeter/traces"


def baseline_package(rev: str, into: Path) -> str:
    """Write the trace adapters of git revision ``rev`` as package ``_baseline_traces`` under ``into``."""
    pkg = into / "_baseline_traces"
    pkg.mkdir()
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", rev, f"{_TRACES}/"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.split()
    for name in names:
        if name.endswith(".py"):
            text = subprocess.run(
                ["git", "show", f"{rev}:{name}"], cwd=REPO, check=True, capture_output=True, text=True
            ).stdout
            (pkg / Path(name).name).write_text(text.replace("knowmeter.traces", "_baseline_traces"), encoding="utf-8")
    sys.path.insert(0, str(into))
    return "_baseline_traces"


def _parse(session: ModuleType, common: ModuleType, files: list[Path]) -> int:
    events = 0
    for path in files:
        agent_of = getattr(session, "subagent_of", None) or session._agent_of  # its name in older revisions
        agent, compaction = agent_of(path)
        reader = session.ClaudeSessionReader(agent_id=agent, compaction=compaction)
        for _ in reader.events(common.read_lines(path)):
            events += 1
    return events


def _orjson_ok(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def _decode(lines: list[bytes]) -> None:
    loads = orjson.loads
    for line in lines:
        loads(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path, nargs="?", help="a Claude projects folder (default: synthesise one)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--baseline-rev", help="git revision whose trace adapters to compare with")
    ap.add_argument("--mb", type=float, default=110.0, help="size of the synthesised corpus")
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder
        if folder is None:
            synthesise(Path(tmp), args.shared, args.mb)
            folder = Path(tmp) / "projects"
        impls = {"current": "knowmeter.traces"}
        if args.baseline_rev:
            impls = {"baseline": baseline_package(args.baseline_rev, Path(tmp)), **impls}
        run(folder, impls, args.rounds)


def run(folder: Path, impls: dict[str, str], rounds: int) -> None:
    files = sorted(folder.rglob("*.jsonl"))
    size = sum(p.stat().st_size for p in files)
    mods = {
        name: (importlib.import_module(f"{pkg}._claude_session"), importlib.import_module(f"{pkg}._common"))
        for name, pkg in impls.items()
    }
    session, common = mods["current"]
    chunks = [files[i : i + _CHUNK] for i in range(0, len(files), _CHUNK)]
    decoded = [
        [
            line
            for p in chunk
            for line in common.read_lines(p)
            if line.strip() and not session._skipped_type(line) and _orjson_ok(line)
        ]
        for chunk in chunks
    ]
    counts = {name: _parse(s, c, files) for name, (s, c) in mods.items()}  # a warm-up run each
    print(f"{len(files)} files, {size / 1e6:.1f} MB; events: {counts}; cpu reference {cpu_reference():.3f} s")
    times: dict[str, list[float]] = {name: [] for name in [*mods, "orjson floor"]}
    for r in range(rounds):
        spent = dict.fromkeys(times, 0.0)
        for i, chunk in enumerate(chunks):
            order = list(mods) if (r + i) % 2 == 0 else list(reversed(mods))
            for name in order:
                started = time.process_time()
                _parse(*mods[name], chunk)
                spent[name] += time.process_time() - started
            started = time.process_time()
            _decode(decoded[i])
            spent["orjson floor"] += time.process_time() - started
        for name, t in spent.items():
            times[name].append(t)
    for name, ts in times.items():
        med = statistics.median(ts)
        print(
            f"{name:>12}: {med:.3f} CPU s (median of {rounds}; {min(ts):.3f}-{max(ts):.3f}),"
            f" {size / 1e6 / med:.0f} MB/s"
        )
    if "baseline" in times:
        ratio = statistics.median(c / b for c, b in zip(times["current"], times["baseline"], strict=True))
        above = statistics.median(
            (c - f) / (b - f)
            for c, b, f in zip(times["current"], times["baseline"], times["orjson floor"], strict=True)
        )
        print(f"current / baseline: {ratio:.3f} (per round, median); above the orjson floor: {above:.3f}")
    print(f"cpu reference {cpu_reference():.3f} s")


if __name__ == "__main__":
    main()
