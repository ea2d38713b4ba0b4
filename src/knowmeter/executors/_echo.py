"""The ``echo`` executor: a harness check that never calls a model. Each task's answer is its own
prompt, at once, at no cost, so a run measures knowmeter alone (planning, spawning no process,
grading, analysis, storing, the report) and dry-checks a configuration end to end; its verdict says
nothing about the knowledge."""

from __future__ import annotations

from knowmeter.executors._protocol import ExecRequest, ExecResult, Executor
from knowmeter.executors._registry import ExecutorSpec, register_executor
from knowmeter.traces import MessageEvent, Trace

VERSION = "echo/1"


class EchoAgent(Executor):
    """Answers every request with its prompt; the trace is that one message."""

    name = "echo"
    non_llm = True
    workspace_leak_allowed = True  # it reads no file: what its workspace holds cannot leak

    def identity(self) -> str:
        return VERSION

    async def run(self, request: ExecRequest) -> ExecResult:
        trace = Trace([MessageEvent("assistant", request.prompt)], source="echo")
        return ExecResult(request.prompt, trace, cost_usd=0.0, num_turns=1)


@register_executor("echo")
def _make_echo(spec: ExecutorSpec) -> EchoAgent:
    return EchoAgent()
