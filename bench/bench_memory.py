"""Peak memory as the sample count grows (prints numbers; not a test).

Workload: N samples × 2 variants through the built-in echo executor (answers at once), run by
``knowmeter.evaluate`` (no spawning, so the numbers are knowmeter's own: plan, run, grade,
analyse, store, compare, report), then
``knowmeter report`` over the stored run, then ``knowmeter report --html --junit --markdown``
(report.html, JUnit XML and the Markdown summary as well; the page's size is printed). Each
step runs in a child process so its peak RSS (``ru_maxrss``) is its own.

The eval's peak is broken down: the interpreter with knowmeter's eval path imported, loading the
samples alone (``load_samples``, each in a process of its own), then, inside the eval, the peak
so far when the plan is made (samples, assertions, tasks), when the tasks have run, and at the
end (the report built from the stored results).
Goals: ≤ 300 MB peak at 50,000 samples (issue 19); the eval ≤ 200 MB at 100,000 (issue 32).

    python bench/bench_memory.py [--samples 5000 100000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _instant import make_project

EVAL = textwrap.dedent("""
    import resource
    import knowmeter
    from knowmeter.api import Listener
    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    class Peaks(Listener):
        def started(self, *args, **kwargs): print("planned", peak())
        def executed(self): print("executed", peak())

    report = knowmeter.evaluate(".", listener=Peaks(), samples=["eval-samples.jsonl"], control="a", treatments=["b"],
                                executor="echo", concurrency=8, no_cache=True, bootstrap_samples=1000)
    print("reported", peak())
    print(report.run.id)
""")

#: the interpreter with the eval path imported; then loading the samples, and nothing else
IMPORTED = "import knowmeter.api, knowmeter.evaluation, knowmeter.pipeline"
LOADED = (
    IMPORTED
    + "; from pathlib import Path; from knowmeter.samples import load_samples as load; "
    + ("load(Path('eval-samples.jsonl'))")
)


#: runs its arguments as a command and prints that command's own peak RSS (KiB) on stderr
MEASURE = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)"
)


def child(args: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and stdout of one command (measured in its own wrapper
    process, so every step's peak is its own)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", MEASURE, *args], cwd=cwd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    return wall, int(proc.stderr.split()[-1]) / 1024, proc.stdout


def eval_breakdown(root: Path, n: int) -> str:
    """Run the eval; print its peak and where it was reached. Returns the run id."""
    imported = child([sys.executable, "-c", IMPORTED], root)[1]
    loaded = child([sys.executable, "-c", LOADED], root)[1]
    wall, rss, out = child([sys.executable, "-c", EVAL], root)
    run_id = out.split()[-1]
    size = sum(f.stat().st_size for f in (root / ".knowmeter" / "runs" / run_id).iterdir()) / 1e6
    print(f"{n:>6} samples × 2 variants: eval peak RSS {rss:7.1f} MB, {wall:6.1f} s; run directory {size:.1f} MB")
    phases = [line.split() for line in out.splitlines()]
    mb = {p[0]: int(p[1]) / 1024 for p in phases if len(p) == 2 and p[0] in ("planned", "executed", "reported")}
    print(
        f"{'':>6}   imports {imported:.1f} MB; + loading the samples alone {loaded - imported:.1f} MB "
        f"(peak {loaded:.1f}); the eval's peak so far: planned {mb['planned']:.1f}, "
        f"tasks run {mb['executed']:.1f}, report built {mb['reported']:.1f} MB (goal ≤ 200 MB at 100,000)"
    )
    return run_id


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, nargs="+", default=[5000, 100000])
    args = ap.parse_args()
    for n in sorted(args.samples):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            make_project(root, n)
            run_id = eval_breakdown(root, n)
            wall, rss, _ = child(
                [sys.executable, "-m", "knowmeter", "report", run_id, "--bootstrap-samples", "1000", "--report-only"],
                root,
            )
            print(
                f"{n:>6} samples × 2 variants: report peak RSS {rss:7.1f} MB, {wall:6.1f} s (goal ≤ 300 MB at 50,000)"
            )
            wall, rss, _ = child(
                [
                    sys.executable,
                    "-m",
                    "knowmeter",
                    "report",
                    run_id,
                    "--bootstrap-samples",
                    "1000",
                    "--report-only",
                    "--html",
                    "--junit",
                    "junit.xml",
                    "--markdown",
                    "summary.md",
                ],
                root,
            )
            page = (root / ".knowmeter" / "runs" / run_id / "report.html").stat().st_size / 1e6
            junit = (root / "junit.xml").stat().st_size / 1e6
            print(
                f"{n:>6} samples × 2 variants: report + html/junit/markdown peak RSS {rss:7.1f} MB, {wall:6.1f} s; "
                f"report.html {page:.1f} MB, junit.xml {junit:.1f} MB (goal ≤ 300 MB at 50,000)"
            )


if __name__ == "__main__":
    main()
