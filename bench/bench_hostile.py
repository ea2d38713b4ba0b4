"""Benchmark: hostile inputs through every loader, as real ``knowmeter`` processes — exit code,
wall seconds and peak RSS of each (prints numbers; not a test).

Each of the hostile values ``tests/fuzz/test_cli_fuzz.py`` uses (nesting 1,000 to 100,000 deep,
integers past any float and past Python's digit limit, a 2 MB string, a 1 MB key, control bytes,
20,000 empty objects) replaces one value of a small valid file, for five loaders: a sample file
(``eval --samples``), ``eval.yaml`` (``eval``), a gold set (``gold validate``), a Skill Graph eval
file (``skill lint``) and an agent trace (``observe``). Every process must exit 0, 1 or 2; the
table shows the slowest and the largest per loader. Goal: no exit 3, each case ≤ 5 s and ≤ 300 MB.

    python bench/bench_hostile.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.fuzz.test_cli_fuzz import HOSTILE, PLACEHOLDER  # noqa: E402

SAMPLES = json.dumps([{"sample_id": "a", "prompt": PLACEHOLDER}, {"sample_id": "b", "prompt": "q"}])
EVAL_YAML = f"samples: s.json\nvariants: [{{name: base, artifact: baseline}}]\nseed: {PLACEHOLDER}\n"
GOLD_META = "metadata: {annotator: me, version: '1', scale: {min: 1, max: 5}}\n"
GOLD_NOTES = f"annotations:\n  - {{sample_id: a, score: {PLACEHOLDER}}}\n"
SKILL_EVALS = json.dumps({"skill_name": "x", "evals": [{"id": 1, "prompt": PLACEHOLDER}]})
TRACE = json.dumps({"type": "assistant", "message": {"content": PLACEHOLDER}, "session_id": "s"})


def run(args: list[str], cwd: Path) -> tuple[int, float, float]:
    """Exit code, wall seconds and peak RSS (MB) of ``knowmeter ARGS`` as its own process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "knowmeter", *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - t0, usage.ru_maxrss / 1024


def case(kind: str, hostile: str, root: Path) -> list[str]:
    """Write ``kind``'s files with ``hostile`` in place of the placeholder; the command to run."""

    def put(template: str) -> str:  # JSON text is flow YAML too
        return template.replace(f'"{PLACEHOLDER}"', hostile).replace(PLACEHOLDER, hostile)

    if kind == "samples":
        (root / "s.json").write_text(put(SAMPLES))
        return ["eval", "--samples", "s.json", "--control", "baseline", "-q", "--no-cache"]
    if kind == "eval.yaml":
        (root / "s.json").write_text(SAMPLES.replace(PLACEHOLDER, "p"))
        (root / "eval.yaml").write_text(put(EVAL_YAML))
        return ["eval", "-q", "--no-cache"]
    if kind == "gold":
        (root / "gold").mkdir()
        (root / "gold" / "metadata.yaml").write_text(GOLD_META)
        (root / "gold" / "annotations.yaml").write_text(put(GOLD_NOTES))
        return ["gold", "validate", "--gold-dir", "gold"]
    if kind == "skill":
        (root / "evals").mkdir()
        (root / "evals" / "x.json").write_text(put(SKILL_EVALS))
        return ["skill", "lint", "evals/x.json"]
    (root / "trace.jsonl").write_text(put(TRACE) + "\n")
    return ["observe", "trace.jsonl"]


def main() -> None:
    print(f"{'loader':<10} {'cases':>5} {'exit 3':>6} {'exits':<12} {'slowest s':>9} {'largest MB':>10}")
    for kind in ("samples", "eval.yaml", "gold", "skill", "trace"):
        codes: list[int] = []
        walls: list[float] = []
        rss: list[float] = []
        for hostile in HOSTILE:
            with tempfile.TemporaryDirectory() as tmp:
                code, wall, mb = run(case(kind, hostile, Path(tmp)), Path(tmp))
            codes.append(code)
            walls.append(wall)
            rss.append(mb)
        exits = ",".join(f"{c}×{codes.count(c)}" for c in sorted(set(codes)))
        print(f"{kind:<10} {len(codes):>5} {codes.count(3):>6} {exits:<12} {max(walls):>9.2f} {max(rss):>10.1f}")


if __name__ == "__main__":
    main()
