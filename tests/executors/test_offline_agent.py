"""The offline agent: real tool calls with true outcomes, answers that depend on the artifact."""

from __future__ import annotations

from pathlib import Path

import anyio

from knowmeter.executors import ExecRequest, ExecutorSpec, create_executor
from knowmeter.traces import ErrorKind, ToolStatus


def ask(ws: Path, prompt: str, system: str | None):
    agent = create_executor(ExecutorSpec("offline"))
    assert agent.non_llm
    return anyio.run(agent.run, ExecRequest(task_id="t", sample_id="s", prompt=prompt, system=system, workspace=ws))


def kb(tmp_path: Path) -> Path:
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "refunds.md").write_text("# Refunds\nRefunds are available within 30 days of purchase.\n")
    return tmp_path


def test_a_skill_that_points_to_the_right_file_finds_the_answer(tmp_path: Path) -> None:
    ws = kb(tmp_path)
    prompt = "Can I get my money back?"
    thin = ask(ws, prompt, "Be friendly.")
    rich = ask(ws, prompt, "Money back, reimbursement → refunds available: knowledge/refunds.md")
    assert "30 days" in rich.output and "knowledge/refunds.md" in rich.output
    assert "30 days" not in thin.output and "not sure" in thin.output  # hedged, not invented
    rich_calls = rich.trace.invocations()
    assert [(c.call.tool, c.call.input.get("file_path")) for c in rich_calls] == [("Read", "knowledge/refunds.md")]
    thin_calls = thin.trace.invocations()
    assert {c.call.tool for c in thin_calls} == {"Grep"}
    assert all(c.result is not None and c.result.error_kind == ErrorKind.EMPTY_SEARCH for c in thin_calls)
    assert all(c.status == ToolStatus.SUCCESS for c in thin_calls)  # an empty search is not a tool error


def test_missing_pointed_file_is_a_failed_read_then_it_searches(tmp_path: Path) -> None:
    ws = kb(tmp_path)
    r = ask(ws, "What is the refund window?", "Refund questions: see knowledge/faq.md")
    first = r.trace.invocations()[0]
    assert first.call.tool == "Read" and first.status == ToolStatus.FAILURE
    assert first.result is not None and first.result.error_kind == ErrorKind.NOT_FOUND
    assert any(
        c.call.tool == "Grep" and c.status == ToolStatus.SUCCESS and "refunds.md" in c.result.output
        for c in r.trace.invocations()[1:]
    )
    assert "30 days" in r.output


def test_deterministic_and_workspace_confined(tmp_path: Path) -> None:
    ws = kb(tmp_path)
    (tmp_path.parent / "secret.md").write_text("the secret refund rule")
    a = ask(ws, "refund rule?", "See ../secret.md for refunds")
    b = ask(ws, "refund rule?", "See ../secret.md for refunds")
    assert a.output == b.output and a.trace.to_dict()["events"] == b.trace.to_dict()["events"]
    assert "secret" not in a.output
