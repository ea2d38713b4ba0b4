"""The runner writes each finished task as a ``TaskRecord`` built from the executor's
``ExecResult`` field by field (issue 36): every field the executor returned is stored and reads
back as it was, and the listener hears the record that was written."""

from __future__ import annotations

from pathlib import Path

import anyio

from knowmeter.executors import ExecRequest, ExecResult, Executor
from knowmeter.runner import Budget, ExecutionSettings, execute_tasks
from knowmeter.store import ResultsWriter, TaskRecord, task_records
from knowmeter.traces import MessageEvent, ToolCallEvent, Trace, trace_from_dict
from tests.runner.test_runner import setup


class EveryField(Executor):
    """Returns a result with every field set to a value other than its default."""

    name = "every-field"
    non_llm = True

    def identity(self) -> str:
        return "every-field/1"

    async def run(self, request: ExecRequest) -> ExecResult:
        trace = Trace(
            [
                MessageEvent("assistant", "hi", turn=1),
                ToolCallEvent("c1", "Read", {"file_path": "a.md"}, turn=1, source_tool="Read"),
            ],
            source="every-field",
            meta={"cwd": "/w", "artifact_delivery": "skill", "warnings": [{"kind": "k", "message": "m"}]},
        )
        return ExecResult(
            "the answer",
            trace,
            usage={"input_tokens": 3, "output_tokens": 4, "cache_read_tokens": 5, "cache_creation_tokens": 6},
            cost_usd=0.25,
            latency_ms=12.5,
            duration_api_ms=10.0,
            num_turns=2,
            error="boom",
            timed_out=True,
        )


def test_every_field_the_executor_returned_is_stored_and_heard(tmp_path: Path) -> None:
    tasks = setup(tmp_path, n=1)
    heard: list[TaskRecord] = []
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        anyio.run(
            lambda: execute_tasks(
                tasks,
                EveryField(),
                writer=writer,
                settings=ExecutionSettings(),
                budget=Budget(),
                cache=None,
                on_record=heard.append,
            )
        )
    stored = list(task_records(path))
    assert stored == heard and len(stored) == 2
    expected = anyio.run(EveryField().run, ExecRequest("t", "s", "p", None))
    for record in stored:
        ex = record.exec
        assert ex.trace is not None
        back = ExecResult(
            ex.output,
            trace_from_dict(ex.trace.model_dump()),
            usage=ex.usage or {},
            cost_usd=ex.cost_usd,
            latency_ms=ex.latency_ms,
            duration_api_ms=ex.duration_api_ms,
            num_turns=ex.num_turns,
            error=ex.error,
            timed_out=ex.timed_out,
        )
        assert back == expected
        assert ex.trace.known.artifact_delivery == "skill"
