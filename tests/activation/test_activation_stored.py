"""A task record's activation block is the type its producer builds (``Detection``, issue 36):
stored, read back as that type and read by the activation report's trials by field name."""

from __future__ import annotations

from pathlib import Path

from knowmeter.activation import ActivationCase, detect_activations
from knowmeter.activation._run import trials_of
from knowmeter.store import RunDir, task_records
from knowmeter.traces import ToolCallEvent, Trace
from tests.support.records import task_record


def test_the_skills_a_trace_loaded_are_stored_and_read_back_by_the_activation_report(tmp_path: Path) -> None:
    call = ToolCallEvent(id="1", tool="Skill", input={"skill": "pdf"})
    record = task_record("c1", cost=0.1)
    record.activation = detect_activations(Trace(source="t", events=[call]), ["pdf", "csv"])
    run_dir = RunDir(tmp_path / "r")
    run_dir.path.mkdir()
    run_dir.results_file.write_bytes(record.line() + b"\n")
    (back,) = task_records(run_dir.results_file)
    assert back.stored()["activation"] == {
        "skill_tool": {"pdf": True, "csv": False},
        "read": {"pdf": False, "csv": False},
        "order": ["pdf"],
    }
    (trial,) = trials_of([back], {"c1": ActivationCase("c1", "p", True)}, "pdf")["a"]
    assert trial.activated is True and trial.how == "skill-tool"
