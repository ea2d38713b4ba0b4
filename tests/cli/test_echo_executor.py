"""``echo``, the built-in harness check: reachable from the command line and eval.yaml, it answers
each task with its prompt, calls no model and says so before the tasks run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowmeter.store import iter_results
from tests.support.cli import km


def _project(root: Path, executor_line: str) -> Path:
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "a.md").write_text("Skill A.\n")
    (root / "skills" / "b.md").write_text("Skill B.\n")
    samples = [
        {"sample_id": f"s{i}", "prompt": f"what is {i}?", "assertions": [{"type": "contains", "value": "what"}]}
        for i in range(3)
    ]
    (root / "eval-samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    (root / "eval.yaml").write_text(
        "samples: eval-samples.jsonl\n"
        "variants:\n  - {name: a, role: control, artifact: skills/a.md}\n"
        "  - {name: b, role: treatment, artifact: skills/b.md}\n" + executor_line
    )
    return root


def _run(root: Path) -> tuple[dict, list[dict]]:  # type: ignore[type-arg]
    """The run's report.json content and its task records (results.jsonl)."""
    (run,) = (root / ".knowmeter" / "runs").glob("*/")
    return json.loads((run / "report.json").read_text()), list(iter_results(run / "results.jsonl"))


@pytest.mark.parametrize(
    ("executor_line", "flags"),
    [("", ("--executor", "echo")), ("executor: echo\n", ())],
    ids=["flag", "eval.yaml"],
)
def test_echo_answers_each_prompt_with_itself_and_calls_no_model(
    tmp_path: Path, executor_line: str, flags: tuple[str, ...]
) -> None:
    root = _project(tmp_path / "p", executor_line)
    r = km("eval", *flags, cwd=root)
    assert r.returncode in (0, 1), r.stderr
    assert "executor echo: a harness check" in r.stderr and "no model is called" in r.stderr
    assert "workspace" not in r.stderr  # echo reads no file: no workspace-leak warning
    report, tasks = _run(root)
    assert report["run"]["executor"]["name"] == "echo"
    assert len(tasks) == 6
    assert all(t["exec"]["output"] == f"what is {t['sample_id'][1:]}?" for t in tasks)
    assert all(t["exec"]["cost_usd"] == 0.0 and t["exec"]["error"] is None for t in tasks)
    assert all(t["grade"]["assertions"][0]["passed"] for t in tasks)
    # the terminal names it as what it is, not as the offline retrieval agent
    assert "(harness check (echo: each answer is its prompt; no model))" in " ".join(r.stdout.split())


def test_eval_help_names_echo_as_a_harness_check(tmp_path: Path) -> None:
    r = km("eval", "--help", cwd=tmp_path)
    assert "echo: a harness check" in " ".join(r.stdout.split())
