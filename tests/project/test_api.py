"""The public Python API (issue 12 item 2) and one decision across the API and the commands
(item 3): ``knowmeter.evaluate`` / ``resume`` / ``rescore`` return the report whose
``decision`` the commands print and exit with — on a passing, a budget-stopped, an errored and
an interrupted run."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest

import knowmeter
from knowmeter.exit_codes import EXIT_INTERRUPTED, EXIT_NOT_PASSED, EXIT_OK
from knowmeter.samples import Sample
from knowmeter.store import TaskRecord
from tests.support.cli import km


@pytest.mark.slow
def test_import_knowmeter_is_cheap_and_every_public_name_resolves() -> None:
    code = (
        "import sys, knowmeter; print(sorted(m for m in sys.modules if m.startswith('knowmeter')) + "
        "sorted(m for m in ('click', 'pydantic', 'anyio', 'yaml', 'scipy', 'numpy', 'rich') if m in sys.modules)); "
        "import knowmeter.api; print('knowmeter.report' in sys.modules); "  # observe_traces needs no report
        "[getattr(knowmeter, n) for n in knowmeter.__all__]; print('knowmeter.api' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:3] == ["['knowmeter', 'knowmeter._version']", "False", "True"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        knowmeter.nope  # noqa: B018


@pytest.mark.slow
def test_evaluate_returns_the_stored_report_and_its_decision(demo: Path, demo_report: dict[str, Any]) -> None:
    decision = demo_report["decision"]
    assert (decision["outcome"], decision["exit_code"], demo_report["exit_code"]) == ("PROGRESS", EXIT_OK, EXIT_OK)
    stored = json.loads((demo / ".knowmeter" / "runs" / demo_report["run"]["id"] / "report.json").read_text())
    assert stored["decision"] == decision and stored["run"]["status"] == "complete"


def test_bad_input_raises_input_error_with_the_line_the_command_prints(tmp_path: Path) -> None:
    with pytest.raises(knowmeter.InputError, match=r"missing\.yaml: config file not found"):
        knowmeter.evaluate(tmp_path / "missing.yaml")
    (tmp_path / "eval-samples.yaml").write_text("- {sample_id: a, prompt: x}\n")
    with pytest.raises(knowmeter.InputError, match="unknown variant 'nosuch'"):
        knowmeter.evaluate(tmp_path, control="nosuch")
    with pytest.raises(TypeError, match="contol"):
        knowmeter.evaluate(tmp_path, contol="baseline")
    with pytest.raises(TypeError, match=r"samples= takes a list of them, e\.g\. samples=\['x\.yaml'\]"):
        knowmeter.evaluate(tmp_path, samples="x.yaml")  # not the files 'x', '.', 'y', …
    for rate in (float("nan"), 1.5):  # as gates.maxGapRate: a rate, never nan
        with pytest.raises(knowmeter.InputError, match="invalid setting max_gap_rate"):
            knowmeter.evaluate(tmp_path, control="baseline", max_gap_rate=rate)
        with pytest.raises(knowmeter.InputError, match="invalid setting gap_rate_regression"):
            knowmeter.evaluate(tmp_path, control="baseline", gap_rate_regression=rate)
    with pytest.raises(knowmeter.InputError, match=r"no runs in .*; run knowmeter eval first"):
        knowmeter.rescore("nope", output_dir=tmp_path / ".knowmeter")
    assert not (tmp_path / ".knowmeter" / "runs").exists()  # nothing ran


def test_the_plan_is_released_before_the_report_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The samples and tasks are gone when finalize reads the stored results (at 50,000 samples
    they would otherwise hold ~130 MB through the report's build)."""
    (tmp_path / "eval-samples.yaml").write_text("- {sample_id: a, prompt: x}\n- {sample_id: b, prompt: y}\n")
    refs: dict[str, weakref.ref[Any]] = {}
    alive: list[bool] = []

    class Watch(knowmeter.Listener):
        def started(self, prepared: Any, run_dir: Any, tasks: int, *, resumed: bool) -> None:
            refs["plan"] = weakref.ref(prepared)

    from knowmeter import pipeline

    real = pipeline.finalize

    def finalize(*args: Any, **kwargs: Any) -> Any:
        gc.collect()
        alive.extend(ref() is not None for ref in refs.values())
        alive.append(any(isinstance(o, Sample) for o in gc.get_objects()))  # a slots Sample takes no weakref
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "finalize", finalize)
    report = knowmeter.evaluate(tmp_path, control="baseline", listener=Watch())
    assert alive == [False, False]
    assert report.run.status == "complete" and report.run.tasks_done == 2


@pytest.mark.slow
def test_overrides_win_over_eval_yaml_and_rescore_recomputes(
    demo: Path, demo_report: dict[str, Any], tmp_path: Path
) -> None:
    project = tmp_path / "p"
    shutil.copytree(demo, project, ignore=shutil.ignore_patterns(".knowmeter"))
    report = knowmeter.evaluate(project / "eval.yaml", repeat=2, bootstrap_samples=200, seed=3)
    assert isinstance(report, knowmeter.Report) and report.statistics is not None
    assert report.run.tasks_total == 92 and report.statistics.config.seed == 3
    run_id = report.run.id
    strict = knowmeter.rescore(run_id, output_dir=project / ".knowmeter", threshold=5)
    assert strict.verdict is not None and strict.decision is not None
    assert strict.verdict.level != "PROGRESS" and strict.exit_code == EXIT_NOT_PASSED
    stored = json.loads((project / ".knowmeter" / "runs" / run_id / "report.json").read_text())
    assert stored == strict.to_dict(tasks=False)  # report.json names results.jsonl for its tasks
    cli = km("report", run_id, "--threshold", "5", "--json", cwd=project)
    assert cli.returncode == EXIT_NOT_PASSED
    assert json.loads(cli.stdout)["decision"] == strict.decision.model_dump(mode="json")


def _outcome(report: knowmeter.Report) -> tuple[str, int]:
    assert report.decision is not None
    return report.decision.outcome, report.decision.exit_code


def _agree(project: Path, report: knowmeter.Report, eval_args: list[str], outcome: str) -> None:
    """The API's decision, ``eval``'s exit code, ``report``'s and ``rescore``'s agree."""
    assert _outcome(report) == (outcome, EXIT_NOT_PASSED) and report.exit_code == EXIT_NOT_PASSED
    r = km("eval", *eval_args, "--json", cwd=project)
    assert r.returncode == EXIT_NOT_PASSED, r.stderr
    assert json.loads(r.stdout)["decision"]["outcome"] == outcome
    for run_id in (report.run.id, "latest"):
        again = km("report", run_id, cwd=project)
        assert again.returncode == EXIT_NOT_PASSED and again.stdout.startswith(f"{outcome} · "), again.stdout
        assert _outcome(knowmeter.rescore(run_id, output_dir=project / ".knowmeter"))[0] == outcome
    assert km("report", "latest", "--report-only", cwd=project).returncode == EXIT_OK


AGENT = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"output": "Refunds are possible within 30 days of purchase.", "costUSD": 0.01}))
"""


@pytest.mark.slow
def test_a_budget_stopped_run_is_incomplete_everywhere(tmp_path: Path) -> None:
    (tmp_path / "eval-samples.yaml").write_text("".join(f"- {{sample_id: s{i}, prompt: p{i}}}\n" for i in range(4)))
    (tmp_path / "agent.py").write_text(AGENT)
    args: dict[str, Any] = {
        "control": "baseline",
        "executor": f"{sys.executable} {tmp_path / 'agent.py'}",
        "budget_usd": 0.025,
        "concurrency": 1,
        "no_cache": True,
    }
    report = knowmeter.evaluate(tmp_path, **args)
    assert report.run.status == "incomplete" and report.run.tasks_done == 2 and report.decision is not None
    assert report.decision.blockers[0].message.startswith("2/4 tasks — stopped by the budget")
    _agree(
        tmp_path,
        report,
        [
            "--control",
            "baseline",
            "--executor",
            args["executor"],
            "--budget-usd",
            "0.025",
            "--concurrency",
            "1",
            "--no-cache",
        ],
        "INCOMPLETE",
    )


@pytest.mark.slow
def test_an_errored_run_is_not_measured_everywhere(tmp_path: Path) -> None:
    (tmp_path / "eval-samples.yaml").write_text("- {sample_id: a, prompt: x}\n- {sample_id: b, prompt: y}\n")
    missing = f"{sys.executable} {tmp_path / 'no_such_agent.py'}"
    report = knowmeter.evaluate(tmp_path, control="baseline", executor=missing, retry=0)
    assert report.run.status == "complete" and report.variants[0].errors == 2
    _agree(tmp_path, report, ["--control", "baseline", "--executor", missing, "--retry", "0"], "NOT MEASURED")


class StopAfter(knowmeter.Listener):
    """Presses Ctrl-C (raises KeyboardInterrupt) once ``n`` tasks are stored."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.seen = 0
        self.lines: list[str] = []

    def record(self, record: TaskRecord) -> None:
        self.seen += 1
        if self.seen == self.n:
            raise KeyboardInterrupt

    def note(self, line: str) -> None:
        self.lines.append(line)


@pytest.mark.slow
def test_an_interrupted_run_is_stored_incomplete_everywhere_and_resumes(tmp_path: Path) -> None:
    (tmp_path / "eval-samples.yaml").write_text("".join(f"- {{sample_id: s{i}, prompt: p{i}}}\n" for i in range(6)))
    listener = StopAfter(2)
    with pytest.raises(knowmeter.RunInterrupted) as stop:
        knowmeter.evaluate(tmp_path, control="baseline", concurrency=1, listener=listener)
    assert listener.lines[0].startswith("executor offline: the built-in non-LLM demo agent")
    assert isinstance(stop.value, KeyboardInterrupt)
    report = stop.value.report
    assert report.run.status == "interrupted" and report.run.tasks_done == 2
    assert _outcome(report) == ("INCOMPLETE", EXIT_NOT_PASSED)
    run_id = stop.value.run_id
    again = km("report", run_id, cwd=tmp_path)
    assert again.returncode == EXIT_NOT_PASSED and again.stdout.startswith("INCOMPLETE · 2/6 tasks"), again.stdout
    assert knowmeter.rescore(run_id, output_dir=tmp_path / ".knowmeter").decision == report.decision
    with pytest.raises(knowmeter.RunInterrupted):  # interrupted again: still incomplete, one more task stored
        knowmeter.resume(run_id, output_dir=tmp_path / ".knowmeter", listener=StopAfter(1))
    done = knowmeter.resume(run_id, output_dir=tmp_path / ".knowmeter")
    assert done.run.status == "complete" and done.run.tasks_done == 6
    assert _outcome(done)[0] == "SOLO" and km("report", run_id, cwd=tmp_path).returncode == done.exit_code
    # the command line: 130 for the interrupt itself (tests/runner/test_interrupt.py sends a real SIGINT)
    assert EXIT_INTERRUPTED == 130
