"""``knowmeter eval`` starts its tasks without importing what only the end of the run needs: the
report stack (the pydantic ``Report`` model, the comparison, the statistics and numpy). Checked in a
process of its own, whose ``sys.modules`` is read the moment the tasks start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: The modules that must not be loaded before the first task runs.
END_OF_RUN = ("numpy", "knowmeter.report", "knowmeter.compare", "knowmeter.stats", "knowmeter.pipeline")

PROBE = f"""
import json, sys
from knowmeter.cli import _run, main
seen = []
def executing(self, budget, _real=_run._Terminal.executing):
    seen.append(sorted(m for m in {END_OF_RUN!r} if m in sys.modules))
    _real(self, budget)
_run._Terminal.executing = executing
sys.argv = ["knowmeter", "eval", "--executor", "echo", "--no-cache", "--quiet"]
try:
    main()
except SystemExit:
    pass
finally:
    print(json.dumps({{"at_start": seen, "at_end": sorted(m for m in {END_OF_RUN!r} if m in sys.modules)}}))
"""


def test_eval_imports_no_report_model_or_numpy_before_its_tasks_run(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Skill A.\n")
    (tmp_path / "b.md").write_text("Skill B.\n")
    (tmp_path / "eval-samples.jsonl").write_text(json.dumps({"sample_id": "s1", "prompt": "hi"}) + "\n")
    (tmp_path / "eval.yaml").write_text(
        "samples: eval-samples.jsonl\nvariants:\n  - {name: a, role: control, artifact: a.md}\n"
        "  - {name: b, role: treatment, artifact: b.md}\n"
    )
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["at_start"] == [[]], done.stderr
    assert "knowmeter.report" in seen["at_end"]  # the run went on to its report
