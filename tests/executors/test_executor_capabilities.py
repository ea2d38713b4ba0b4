"""Executor capabilities are part of the ``Executor`` protocol, with safe defaults (issue 36 point
3): no ``getattr`` probing, so an executor or a wrapper that does not say ``sealed`` cannot turn
the workspace-leak refusal into no check at all."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from knowmeter.comprehension._scripted import ScriptedGrader
from knowmeter.errors import InputError
from knowmeter.evaluation import Overrides, prepare, resolve_config
from knowmeter.executors import (
    ExecRequest,
    ExecResult,
    Executor,
    ExecutorSpec,
    ExecutorWrapper,
    UnknownExecutor,
    _registry,
    create_executor,
)
from knowmeter.executors._claude_cli import ClaudeCliExecutor
from knowmeter.executors._claude_sdk import ClaudeSdkExecutor
from knowmeter.executors._codex_cli import CodexCliExecutor
from knowmeter.executors._model_api import ApiExecutor
from knowmeter.executors._offline import OfflineAgent
from knowmeter.executors._script import ScriptExecutor
from knowmeter.runner import Budget, ExecutionSettings
from knowmeter.runner._budget import MeteredExecutor
from knowmeter.runner._ray import RayExecutor
from knowmeter.traces import Trace
from tests.support.retries import run_with_retries

#: the capabilities: the protocol's attributes that have a default
CAPABILITIES = [name for name in Executor.__annotations__ if name in vars(Executor)]


class _Forgetful(Executor):
    """A wrapper written by hand that forwards the agent's answers but none of its capabilities."""

    def __init__(self, inner: Executor) -> None:
        self.inner, self.name, self.non_llm = inner, "forgetful", inner.non_llm

    def identity(self) -> str:
        return "forgetful:" + self.inner.identity()

    async def run(self, request: ExecRequest) -> ExecResult:
        return await self.inner.run(request)


class _Slow(Executor):
    """Answers after ``delay`` seconds, past the task's timeout."""

    name, non_llm = "slow", True

    def __init__(self, delay: float, *, stops_itself: bool) -> None:
        self.delay, self.enforces_timeout = delay, stops_itself

    def identity(self) -> str:
        return "slow"

    async def run(self, request: ExecRequest) -> ExecResult:
        await anyio.sleep(self.delay)
        return ExecResult("partial", Trace(source="slow"), timed_out=True)


def test_the_capabilities_are_the_protocols() -> None:
    assert CAPABILITIES == ["sealed", "enforces_timeout", "workspace_leak_allowed"]


def test_a_wrapper_that_forwards_nothing_still_has_a_leaky_workspace_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sample file in the agent's workspace: a script agent is warned, an executor that does not
    say it may see it (here a wrapper that forwards no capability) is refused, as an agent CLI is."""
    (tmp_path / "eval-samples.json").write_text('[{"sample_id": "a", "prompt": "p"}]')
    (tmp_path / "agent.py").write_text("print('{}')\n")
    create_executor(ExecutorSpec("offline"))  # the built-ins first: the registry then takes one more
    monkeypatch.setitem(_registry._REGISTRY, "forgetful", lambda spec: _Forgetful(OfflineAgent()))
    script = resolve_config(Overrides(control="baseline", executor=f"{sys.executable} agent.py"), tmp_path)
    assert prepare(script).workspace_leak is not None  # a warning, the run goes on
    forgetful = resolve_config(Overrides(control="baseline", executor="forgetful"), tmp_path)
    with pytest.raises(InputError, match=r"contains the sample file eval-samples\.json .* give the variants a cwd"):
        prepare(forgetful)


@pytest.mark.parametrize("cls", [ClaudeCliExecutor, CodexCliExecutor, ClaudeSdkExecutor])
def test_agent_clis_stop_their_tasks_and_are_refused_a_leaky_workspace(cls: type[Executor]) -> None:
    assert cls.enforces_timeout is True
    assert cls.workspace_leak_allowed is False


@pytest.mark.parametrize("cls", [OfflineAgent, ScriptExecutor, ApiExecutor, ScriptedGrader])
def test_executors_without_a_sandbox_say_so(cls: type[Executor]) -> None:
    assert cls.sealed is None and cls.enforces_timeout is False
    assert cls.workspace_leak_allowed is True


@pytest.mark.parametrize(
    "wrap",
    [
        lambda inner: MeteredExecutor(inner, Budget(), "judge"),
        lambda inner: RayExecutor(inner, ExecutorSpec("x"), remote=None),
    ],
    ids=["metered", "ray"],
)
def test_wrappers_forward_every_capability(wrap, tmp_path: Path) -> None:
    inner = _Forgetful(OfflineAgent())
    inner.sealed, inner.enforces_timeout, inner.workspace_leak_allowed = False, True, True
    wrapped = wrap(inner)
    assert {c: getattr(wrapped, c) for c in CAPABILITIES} == {c: getattr(inner, c) for c in CAPABILITIES}
    assert isinstance(wrapped, ExecutorWrapper)


@pytest.mark.parametrize(("stops_itself", "output"), [(True, "partial"), (False, "")])
def test_the_runner_waits_longer_for_an_executor_that_stops_its_task_itself(stops_itself: bool, output: str) -> None:
    """Its partial answer is kept; any other executor is stopped by the runner at the timeout."""
    result, _ = run_with_retries(
        _Slow(0.3, stops_itself=stops_itself), ExecRequest("t", "s", "p", None), ExecutionSettings(timeout_s=0.05)
    )
    assert result.output == output and result.timed_out


def test_a_plugin_class_that_is_not_an_executor_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class Bare:
        name, non_llm = "bare", False

        def identity(self) -> str:
            return "bare"

        async def run(self, request: ExecRequest) -> ExecResult:
            raise AssertionError

    create_executor(ExecutorSpec("offline"))
    monkeypatch.setitem(_registry._REGISTRY, "bare", lambda spec: Bare())
    with pytest.raises(UnknownExecutor, match=r"Bare is not a knowmeter\.executors\.Executor; subclass it"):
        create_executor(ExecutorSpec("bare"))
