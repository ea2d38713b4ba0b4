"""The ``claude-sdk`` executor (claude-agent-sdk, an optional extra) against the scripted model
server. Skipped when the package is not installed; the install hint is tested either way."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from knowmeter.errors import InputError
from knowmeter.executors import (
    ExecRequest,
    ExecResult,
    ExecutorSpec,
    ExecutorUnavailable,
    SkillInstall,
    create_executor,
)
from knowmeter.executors._claude_sdk import flag_dict, wrapper_script
from knowmeter.traces import ErrorKind
from tests.support.agents import executor_options
from tests.support.mock_model import MockModelServer, ServerFactory

pytestmark = pytest.mark.agents


def test_missing_package_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", None)
    with pytest.raises(ExecutorUnavailable, match=r"pip install 'knowmeter\[claude\]'"):
        create_executor(ExecutorSpec("claude-sdk", None, {}))


def test_extra_args_become_sdk_flags() -> None:
    assert flag_dict(["--effort", "low", "--no-chrome", "--betas=x,y"]) == {
        "effort": "low",
        "no-chrome": None,
        "betas": "x,y",
    }
    with pytest.raises(InputError, match="not a --flag"):
        flag_dict(["effort"])


def test_wrapper_runs_the_cli_with_exactly_the_task_env(tmp_path: Path) -> None:
    import subprocess

    script = tmp_path / "wrapper"
    script.write_text(wrapper_script(["/usr/bin/env"], {"HOME": "/h o'me", "PATH": "/usr/bin:/bin"}))
    script.chmod(0o700)
    out = subprocess.run(
        [str(script)],
        env={"SECRET": "x", "CLAUDE_CODE_ENTRYPOINT": "sdk-py"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert sorted(out) == [
        "CLAUDE_AGENT_SDK_VERSION=",
        "CLAUDE_CODE_ENTRYPOINT=sdk-py",
        "HOME=/h o'me",
        "PATH=/usr/bin:/bin",
    ]


@pytest.fixture
def sdk() -> Any:
    return pytest.importorskip("claude_agent_sdk")


def _run(claude_bin: Path, srv: MockModelServer, request: ExecRequest, **options: Any) -> ExecResult:
    spec = ExecutorSpec("claude-sdk", None, executor_options("claude-sdk", srv, bin=str(claude_bin), **options))
    return anyio.run(create_executor(spec).run, request)


def _request(
    workspace: Path, variant: str = "baseline", system: str | None = None, skill: SkillInstall | None = None
) -> ExecRequest:
    return ExecRequest(
        task_id=f"s1::{variant}::r0",
        sample_id="s1",
        prompt="find banana",
        system=system,
        workspace=workspace,
        skill=skill,
        timeout_s=60,
    )


def test_sdk_run_is_traced_and_isolated(
    sdk: Any,
    claude_bin: Path,
    mock_server: ServerFactory,
    workspace: Path,
    skill: SkillInstall,
    skill_marker: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KNOWMETER_TEST_SECRET", "s3cret")
    srv = mock_server(
        {
            "anthropic": [
                {"tool": {"name": "Grep", "input": {"pattern": "banana", "output_mode": "content", "-n": True}}},
                {"tool": {"name": "Grep", "input": {"pattern": "kiwi"}}},
                {"shell": "env; exit 2"},
                {"text": "banana is on line 2"},
            ]
        }
    )
    baseline = _run(claude_bin, srv, _request(workspace))
    n_baseline = len(srv.model_requests())
    treatment = _run(claude_bin, srv, _request(workspace, "t", skill.text, skill))
    for result in (baseline, treatment):
        assert result.ok and result.output == "banana is on line 2", result.error
        calls = result.trace.invocations()
        assert [c.call.tool for c in calls] == ["Grep", "Grep", "Bash"]
        assert calls[1].result is not None and calls[1].result.error_kind is ErrorKind.EMPTY_SEARCH
        env_dump = calls[2].result.output  # type: ignore[union-attr]
        assert "KNOWMETER_TEST_SECRET" not in env_dump and "CLAUDE_CODE_ENTRYPOINT=sdk-py" in env_dump
        assert (result.usage["input_tokens"], result.usage["output_tokens"]) == (400, 40)
        assert result.num_turns == 4 and result.cost_usd is not None
        assert result.trace.meta["executor"] == "claude-sdk" and set(result.trace.meta["tools"]) == {
            "Read",
            "Grep",
            "Glob",
            "Bash",
            "Skill",
        }
    bodies = srv.bodies_text()
    assert not any(skill_marker in b for b in bodies[:n_baseline])
    assert all(skill_marker in b for b in bodies[n_baseline:])


def test_sdk_api_error_is_an_error_result(
    sdk: Any, claude_bin: Path, mock_server: ServerFactory, workspace: Path
) -> None:
    srv = mock_server({"anthropic": [{"http_error": 400, "message": "scripted invalid request"}]})
    result = _run(claude_bin, srv, _request(workspace))
    assert result.error is not None and "scripted invalid request" in result.error
