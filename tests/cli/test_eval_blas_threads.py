"""``knowmeter eval`` loads numpy's BLAS with one thread for its report (issue 32: the finish's
parent CPU): OpenBLAS's pool of threads, started when numpy is imported and spinning after each
product, cost CPU the agents and the machine's neighbours pay, for matrix-vector products too
small to gain from it. A user's own ``OPENBLAS_NUM_THREADS`` is kept, and no process started
later inherits knowmeter's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowmeter._blas import THREADS_VARIABLE

#: ``knowmeter eval`` on the project in its folder; on the way out, how many threads the process
#: has and what it would pass on as OPENBLAS_NUM_THREADS.
PROBE = """
import atexit, json, os, sys
atexit.register(lambda: print(json.dumps([len(os.listdir("/proc/self/task")), os.environ.get("OPENBLAS_NUM_THREADS")])))
from knowmeter.cli import main
sys.argv = ["knowmeter", "eval", "--executor", "echo", "--no-cache", "--quiet", "--report-only"]
main()
"""


def _eval(project: Path, threads: str | None) -> tuple[int, str | None]:
    env = {k: v for k, v in os.environ.items() if k != THREADS_VARIABLE}
    if threads is not None:
        env[THREADS_VARIABLE] = threads
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    count, passed_on = json.loads(done.stdout.splitlines()[-1])
    return count, passed_on


@pytest.mark.slow  # three evals in processes of their own
@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2, reason="needs /proc, 2+ cores")
def test_eval_starts_no_blas_thread_pool_and_passes_no_setting_on(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Skill A.\n")
    (tmp_path / "b.md").write_text("Skill B.\n")
    with (tmp_path / "eval-samples.jsonl").open("w") as fh:
        for i in range(4):
            fh.write(json.dumps({"sample_id": f"s{i}", "prompt": f"question {i}"}) + "\n")
    (tmp_path / "eval.yaml").write_text(
        "samples: eval-samples.jsonl\nvariants:\n  - {name: a, role: control, artifact: a.md}\n"
        "  - {name: b, role: treatment, artifact: b.md}\n"
    )
    default, passed_on = _eval(tmp_path, None)
    one, _ = _eval(tmp_path, "1")  # the user asked for one thread: the count knowmeter must match
    assert default == one  # was one more thread a core after the first (OpenBLAS's pool)
    assert passed_on is None
    assert _eval(tmp_path, "2")[1] == "2"  # the user's own setting is left as it was


def test_the_setting_is_made_only_for_numpy_s_first_import() -> None:
    code = (
        "import os, sys; from knowmeter._blas import one_blas_thread\n"
        "with one_blas_thread(): inside = os.environ.get('OPENBLAS_NUM_THREADS'); import numpy\n"
        "with one_blas_thread(): again = os.environ.get('OPENBLAS_NUM_THREADS')\n"
        "print(inside, os.environ.get('OPENBLAS_NUM_THREADS'), again)"
    )
    env = {k: v for k, v in os.environ.items() if k != THREADS_VARIABLE}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["1", "None", "None"], done.stderr
