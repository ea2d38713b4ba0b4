"""An executor that answers at once (the runner's own overhead, no agent): registered as
``instant`` when this module is imported — by the benchmark, and on every Ray worker through the
``worker_process_setup_hook`` of the benchmark's runtime_env."""

from __future__ import annotations

from knowmeter.executors import ExecRequest, ExecResult, register_executor
from knowmeter.traces import Trace


class Instant:
    name = "instant"
    non_llm = True

    def identity(self) -> str:
        return "instant"

    async def run(self, request: ExecRequest) -> ExecResult:
        return ExecResult("ok", Trace(source="instant"), cost_usd=0.0)


def register() -> None:
    """Register ``instant`` (the Ray workers' setup hook)."""
    register_executor("instant")(lambda spec: Instant())



register()
