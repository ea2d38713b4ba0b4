"""``knowmeter eval`` starts its tasks without importing what only the end of the run needs (the
report stack: the pydantic ``Report`` model, the comparison, the statistics and numpy) nor what
this run never uses (the other executors, the YAML parser without an eval.yaml, rich when
--quiet), and without the cyclic GC rescanning its start-up. Checked in a process of its own, read
the moment the tasks start."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: The modules that must not be loaded before the first task runs.
END_OF_RUN = ("numpy", "knowmeter.report", "knowmeter.compare", "knowmeter.stats", "knowmeter.pipeline")
#: ... nor, in a --quiet run of the echo executor without an eval.yaml, at all before it.
UNUSED = (
    "yaml",
    "rich",
    "knowmeter.executors._claude_cli",
    "knowmeter.executors._codex_cli",
    "knowmeter.executors._claude_sdk",
    "knowmeter.executors._openai_api",
    "knowmeter.executors._anthropic_api",
    "knowmeter.executors._offline",
)

PROBE = f"""
import gc, json, sys
from knowmeter.cli import _run, main
import knowmeter.evaluation as evaluation
seen = {{}}
prepare = evaluation.prepare
def preparing(config):
    seen["gc_while_preparing"] = gc.isenabled()
    return prepare(config)
evaluation.prepare = preparing
def executing(self, budget, _real=_run._Terminal.executing):
    seen["at_start"] = sorted(m for m in {(*END_OF_RUN, *UNUSED)!r} if m in sys.modules)
    seen["gc_at_start"] = gc.isenabled()
    seen["frozen_at_start"] = gc.get_freeze_count() > 0
    _real(self, budget)
_run._Terminal.executing = executing
sys.argv = ["knowmeter", "eval", *sys.argv[1:], "--executor", "echo", "--no-cache", "--quiet"]
try:
    main()
except SystemExit:
    pass
finally:
    seen["at_end"] = sorted(m for m in {END_OF_RUN!r} if m in sys.modules)
    print(json.dumps(seen))
"""


def _probe(project: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=project, capture_output=True, text=True, timeout=120
    )
    seen: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert "at_start" in seen, done.stderr
    return seen


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "a.md").write_text("Skill A.\n")
    (tmp_path / "b.md").write_text("Skill B.\n")
    (tmp_path / "eval-samples.jsonl").write_text(json.dumps({"sample_id": "s1", "prompt": "hi"}) + "\n")
    return tmp_path


def test_eval_imports_no_report_model_or_numpy_before_its_tasks_run(project: Path) -> None:
    (project / "eval.yaml").write_text(
        "samples: eval-samples.jsonl\nvariants:\n  - {name: a, role: control, artifact: a.md}\n"
        "  - {name: b, role: treatment, artifact: b.md}\n"
    )
    seen = _probe(project)
    assert not set(seen["at_start"]) & set(END_OF_RUN)
    assert "knowmeter.report" in seen["at_end"]  # the run went on to its report


def test_a_quiet_eval_without_eval_yaml_imports_no_yaml_rich_or_other_executor_before_its_tasks(project: Path) -> None:
    seen = _probe(project, "--samples", "eval-samples.jsonl", "--control", "a.md", "--treatment", "b.md")
    assert seen["at_start"] == []


def test_the_cyclic_gc_is_paused_through_start_up_and_resumed_when_the_tasks_start(project: Path) -> None:
    """Start-up allocates much and frees little: no collection until the run starts, where what it
    made is frozen (never rescanned) and the GC runs again for the tasks."""
    seen = _probe(project, "--samples", "eval-samples.jsonl", "--control", "a.md", "--treatment", "b.md")
    assert seen["gc_while_preparing"] is False
    assert seen["gc_at_start"] is True and seen["frozen_at_start"] is True


def test_bad_input_before_the_run_starts_leaves_the_gc_running(tmp_path: Path) -> None:
    """An embedding process (here click's runner, in this process) keeps its collector."""
    from click.testing import CliRunner

    from knowmeter.cli import cli

    assert gc.isenabled()
    done = CliRunner().invoke(cli, ["eval", "--samples", str(tmp_path / "missing.jsonl"), "--control", "a.md"])
    assert done.exit_code == 2 and "sample file not found" in done.output
    assert gc.isenabled()
