"""Stored results against the run's plan: a record outside it (unknown variant, sample or
repeat, a task id that does not match), an impossible value (a score off the 1–5 scale, a
negative or non-finite cost or count) or a missing results file is one line naming the file,
the task and the field, exit 2; a plan task without a readable record makes the run INCOMPLETE."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import init_demo, km

Edit = Callable[[list[dict[str, Any]]], None]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("plan") / "p"
    init_demo(p)
    assert km("eval", "--report-only", "--bootstrap-samples", "200", cwd=p).returncode == 0
    return p


def _results(p: Path) -> Path:
    return next((p / ".knowmeter" / "runs").iterdir()) / "results.jsonl"


def _set(field: str, value: Any, task_id: str | None = None) -> Edit:
    def edit(records: list[dict[str, Any]]) -> None:
        rec = records[0]
        *parents, last = field.split(".")
        target = rec
        for key in parents:
            target = target[key]
        target[last] = value
        if task_id is not None:
            rec["task_id"] = task_id.format(**rec)

    return edit


def _swap_role(records: list[dict[str, Any]]) -> None:
    rec = next(r for r in records if r["variant"] == "support-basic")
    rec["role"] = "treatment"


FAULTS: dict[str, tuple[Edit, str]] = {
    "unknown variant": (
        _set("variant", "ghost", "{sample_id}::ghost::r0"),
        "variant 'ghost' is not one of the run's variants (support-basic, support-expert)",
    ),
    "unknown sample": (
        _set("sample_id", "ghost", "ghost::{variant}::r0"),
        "records of 24 samples, but the run planned 23",
    ),
    "repeat outside the plan": (
        _set("repeat", 5, "{sample_id}::{variant}::r5"),
        "repeat 5 is outside the run's 1 repeat(s)",
    ),
    "wrong role": (_swap_role, "role 'treatment': variant 'support-basic' is the run's control"),
    "task id of another task": (_set("task_id", "x::support-basic::r0"), "task_id does not match"),
    "composite off the scale": (_set("grade.composite", 99), "grade.composite: Input should be less than or equal"),
    "layer off the scale": (_set("grade.layers.fact", -3), "grade.layers.fact: Input should be greater than or equal"),
    "negative cost": (_set("exec.cost_usd", -1), "exec.cost_usd: Input should be greater than or equal to 0"),
    "negative tokens": (_set("exec.usage", {"input_tokens": -5}), "exec.usage.input_tokens"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_record_outside_the_plan_or_the_scale_is_one_line(project: Path, tmp_path: Path, fault: str) -> None:
    p = tmp_path / "p"
    shutil.copytree(project, p)
    edit, expected = FAULTS[fault]
    f = _results(p)
    records = [json.loads(line) for line in f.read_text().splitlines()]
    edit(records)
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = km("report", "latest", "--bootstrap-samples", "200", cwd=p)
    assert r.returncode == 2, r.stdout
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"knowmeter: error: {f.relative_to(p)}: ") and expected in line, line
    assert line.endswith("the results file was edited or damaged: restore it or run knowmeter eval again")


def _fifo(path: Path) -> Path:
    os.mkfifo(path)  # (a reader that opened it would wait for a writer forever)
    return path


@pytest.mark.parametrize(
    ("replace", "what"),
    [
        (Path.unlink, "missing"),
        (lambda f: (f.unlink(), f.mkdir()), "not a regular file (a folder, a pipe or a device)"),
        (lambda f: (f.unlink(), _fifo(f)), "not a regular file (a folder, a pipe or a device)"),
    ],
    ids=["deleted", "folder", "fifo"],
)
def test_a_missing_or_replaced_results_file_is_one_line(
    project: Path, tmp_path: Path, replace: Callable[[Path], object], what: str
) -> None:
    p = tmp_path / "p"
    shutil.copytree(project, p)
    f = _results(p)
    replace(f)
    r = km("report", "latest", cwd=p)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"knowmeter: error: {f.relative_to(p)}: {what} — the run's results were deleted, moved or replaced: "
        "restore the file, or run knowmeter eval again"
    )


def test_a_complete_run_with_an_unreadable_record_is_incomplete(project: Path, tmp_path: Path) -> None:
    p = tmp_path / "p"
    shutil.copytree(project, p)
    f = _results(p)
    data = f.read_bytes()
    at = data.index(b'"output"')
    f.write_bytes(data[: at + 3] + b"\xff" + data[at + 4 :])
    report = json.loads(km("report", "latest", "--json", "--bootstrap-samples", "200", cwd=p).stdout)["run"]
    assert report["tasks_done"] == 45 and report["results_problems"] == ["line 1: not valid JSON; not counted"]
    assert report["partial"]["reason"].startswith("1 task(s) have no readable record in results.jsonl")
    assert "ended complete" not in report["partial"]["reason"]


def test_a_finished_run_whose_report_is_damaged_is_listed_as_finished(project: Path, tmp_path: Path) -> None:
    """With its report.json damaged and the index rebuilt (or lost), a complete run was listed as
    killed and INCOMPLETE with a --resume to run; it is the status its run.json gives, its outcome
    not known, and the command that writes the report again."""
    p = tmp_path / "p"
    shutil.copytree(project, p)
    run = _results(p).parent
    (run / "report.json").write_text("garbage\n")
    (p / ".knowmeter" / "index.sqlite").unlink()
    r = km("runs", cwd=p)
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())  # (as the terminal's width wraps it)
    assert text.startswith(f"{run.name} · ") and " · complete · not known (not indexed) · 46/46 tasks" in text
    assert (
        "not in the run index (its report.json unreadable, or the index locked or read-only when it finished): "
        f"knowmeter report {run.name} writes both again"
    ) in text
    assert km("report", run.name, "--bootstrap-samples", "200", cwd=p).returncode in (0, 1)
    assert " · complete · PROGRESS · 46/46 tasks" in km("runs", cwd=p).stdout.splitlines()[0]


def test_runs_says_which_run_folders_it_cannot_list(project: Path, tmp_path: Path) -> None:
    """A run folder whose run.json is damaged was passed over in silence ("no runs yet" for a store
    of nothing else); it is named on stderr, and --json stays the list."""
    p = tmp_path / "p"
    shutil.copytree(project, p)
    run = _results(p).parent.name
    damaged = p / ".knowmeter" / "runs" / "20260101-000000-abcdef"
    damaged.mkdir()
    (damaged / "run.json").write_text("{not json\n")
    r = km("runs", cwd=p)
    assert r.returncode == 0 and r.stdout.startswith(f"{run} · "), r.stdout
    assert r.stderr.strip() == (
        "⚠ 1 run folder(s) not listed: their run.json cannot be read (20260101-000000-abcdef); "
        "knowmeter report ID names the problem"
    )
    assert [x["id"] for x in json.loads(km("runs", "--json", cwd=p).stdout)] == [run]
