"""A benchmark project, and an executor that answers at once (the runner's own overhead, no agent): registered as
``instant`` when this module is imported — by the benchmark, and on every Ray worker through the
``worker_process_setup_hook`` of the benchmark's runtime_env."""

from __future__ import annotations

import json
from pathlib import Path

from knowmeter.executors import ExecRequest, ExecResult, Executor, register_executor
from knowmeter.traces import Trace


class Instant(Executor):
    name = "instant"
    non_llm = True
    workspace_leak_allowed = True  # it reads no workspace

    def identity(self) -> str:
        return "instant"

    async def run(self, request: ExecRequest) -> ExecResult:
        return ExecResult("ok", Trace(source="instant"), cost_usd=0.0)


def make_project(root: Path, n: int) -> None:
    """A project of ``n`` one-assertion samples and two one-line skills, ``a`` and ``b``."""
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "a.md").write_text("Skill A.\n")
    (root / "skills" / "b.md").write_text("Skill B.\n")
    with (root / "eval-samples.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(
                json.dumps(
                    {
                        "sample_id": f"s{i:06d}",
                        "prompt": f"question {i}",
                        "assertions": [{"type": "contains", "value": "ok"}],
                    }
                )
                + "\n"
            )


def register() -> None:
    """Register ``instant`` (the Ray workers' setup hook)."""
    register_executor("instant")(lambda spec: Instant())


register()
