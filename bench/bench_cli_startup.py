"""Start-up time: ``knowmeter --help`` (target ≤ 0.3 s), and the ``eval`` path up to its first task —
the imports it makes before the tasks start (``python -X importtime``, target ≤ 0.3 s) and the CPU it
has spent by then — with the heavy modules each has loaded (scipy, numpy, the SDKs; the report
stack must wait for the end of the run). Prints numbers; not a test."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("scipy", "numpy", "openai", "anthropic", "rich", "pydantic", "knowmeter.report", "knowmeter.compare")

#: ``knowmeter eval --executor echo`` on a two-sample project; when its tasks start, it writes the
#: CPU seconds spent so far and the heavy modules loaded to stderr, after a marker line.
EVAL_PROBE = f"""
import json, sys, time
from knowmeter.cli import _run, main
def executing(self, budget, _real=_run._Terminal.executing):
    loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)
    print("#tasks-start " + json.dumps([time.process_time(), loaded, list(sys.modules)]), file=sys.stderr, flush=True)
    _real(self, budget)
_run._Terminal.executing = executing
sys.argv = ["knowmeter", "eval", "--executor", "echo", "--no-cache", "--quiet"]
main()
"""


def _project(root: Path) -> None:
    (root / "a.md").write_text("Skill A.\n")
    (root / "b.md").write_text("Skill B.\n")
    (root / "eval-samples.jsonl").write_text(
        "".join(json.dumps({"sample_id": f"s{i}", "prompt": f"q{i}"}) + "\n" for i in range(2))
    )
    (root / "eval.yaml").write_text(
        "samples: eval-samples.jsonl\nvariants:\n  - {name: a, role: control, artifact: a.md}\n"
        "  - {name: b, role: treatment, artifact: b.md}\n"
    )


#: Imports the modules named on stdin in that order and prints the CPU seconds it took.
IMPORT_CPU = """
import importlib, json, sys, time
names = json.load(sys.stdin)
t0 = time.process_time()
for name in names:
    try:
        importlib.import_module(name)
    except Exception:
        pass
print(time.process_time() - t0)
"""


def import_cpu(modules: list[str]) -> float:
    """CPU seconds a fresh interpreter takes to import ``modules`` (in their order): the imports'
    cost without the wall-clock noise of a loaded machine."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_CPU], input=json.dumps(modules), capture_output=True, text=True, check=True
    )
    return float(done.stdout)


def eval_start(root: Path) -> tuple[float, float, list[str], list[str]]:
    """Seconds of imports before the tasks start (the top-level imports' cumulative times), the
    process's CPU seconds by then, the heavy modules loaded and every module loaded."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", EVAL_PROBE], cwd=root, capture_output=True, text=True, check=False
    )
    imports_us = 0
    for line in done.stderr.splitlines():
        if line.startswith("#tasks-start "):
            cpu, loaded, modules = json.loads(line.split(" ", 1)[1])
            return imports_us / 1e6, cpu, loaded, modules
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit() and not name.startswith("   "):  # a top-level import
                imports_us += int(cumulative)
    raise SystemExit(f"the eval did not start its tasks: {done.stderr[-2000:]}")


def main() -> None:
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "knowmeter", "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, knowmeter.cli; print(sorted(m for m in {HEAVY!r} if m in sys.modules))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"knowmeter --help: median {statistics.median(times):.3f} s, min {min(times):.3f} s (target ≤ 0.3 s)")
    print(f"heavy modules imported by the CLI entry point: {probe}")
    with tempfile.TemporaryDirectory() as tmp:
        _project(Path(tmp))
        runs = [eval_start(Path(tmp)) for _ in range(7)]
    imports = [r[0] for r in runs]
    cpu = [r[1] for r in runs]
    others = [m for m in runs[0][3] if m.split(".")[0] != "knowmeter"]
    import_cpus, other_cpus = [], []
    for _ in range(7):  # interleaved: a loaded machine drifts
        import_cpus.append(import_cpu(runs[0][3]))
        other_cpus.append(import_cpu(others))
    print(
        f"knowmeter eval, up to its first task ({len(runs[0][3])} modules loaded): imports "
        f"{statistics.median(import_cpus):.3f} s CPU median, {min(import_cpus):.3f} s min (a fresh interpreter "
        f"importing them; target ≤ 0.3 s), of which {statistics.median(other_cpus):.3f} s median the "
        f"{len(others)} that are not knowmeter's (click, pydantic, anyio/asyncio, the standard library: the floor "
        f"of this path); wall {statistics.median(imports):.3f} s median, {min(imports):.3f} s min "
        "(python -X importtime, top-level cumulative: a loaded machine inflates it); process CPU by then "
        f"{statistics.median(cpu):.3f} s median (interpreter, imports, config, samples, plan, run.json)"
    )
    print(f"heavy modules loaded when the tasks start: {runs[0][2]}")


if __name__ == "__main__":
    main()
