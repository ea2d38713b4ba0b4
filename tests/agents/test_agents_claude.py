"""The ``claude`` executor end to end: the real Claude Code CLI (pinned in tests/agents/package.json)
against the scripted model server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from knowmeter.executors import (
    ExecRequest,
    ExecResult,
    ExecutorSpec,
    ExecutorUnavailable,
    SkillInstall,
    create_executor,
)
from knowmeter.traces import ErrorKind, ToolStatus
from tests.support.agents import executor_options
from tests.support.mock_model import MockModelServer, ServerFactory

pytestmark = pytest.mark.agents

DEFAULT_PROMPT_PHRASE = "You are an interactive agent that helps users with software engineering tasks"

SEARCH = {
    "anthropic": [
        {
            "preamble": "Let me search.",
            "tool": {"name": "Grep", "input": {"pattern": "banana", "output_mode": "content", "-n": True}},
        },
        {"tool": {"name": "Grep", "input": {"pattern": "kiwi"}}},
        {"tool": {"name": "Read", "input": {"file_path": "/nonexistent-knowmeter/missing.txt"}}},
        {"shell": "ls -a; echo HOME=$HOME; exit 3"},
        {"text": "banana is in fruits.txt line 2"},
    ]
}


def _run(claude_bin: Path, srv: MockModelServer, request: ExecRequest, **options: Any) -> ExecResult:
    spec = ExecutorSpec("claude", None, executor_options("claude", srv, bin=str(claude_bin), **options))
    return anyio.run(create_executor(spec).run, request)


def _run_arms(srv: MockModelServer, requests: dict[str, ExecRequest], **options: Any) -> dict[str, ExecResult]:
    """Run the requests at the same time through one executor."""
    executor = create_executor(ExecutorSpec("claude", None, executor_options("claude", srv, **options)))
    results: dict[str, ExecResult] = {}

    async def one(arm: str) -> None:
        results[arm] = await executor.run(requests[arm])

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for arm in requests:
                tg.start_soon(one, arm)

    anyio.run(main)
    return results


def _bodies_of(srv: MockModelServer, result: ExecResult) -> list[str]:
    """The request bodies of one claude run (its session id is in every request's headers)."""
    session = result.trace.meta["session_id"]
    return [
        json.dumps(r["body"]) for r in srv.model_requests() if r["headers"].get("x-claude-code-session-id") == session
    ]


def _request(
    workspace: Path,
    *,
    variant: str = "baseline",
    system: str | None = None,
    skill: SkillInstall | None = None,
    prompt: str = "find the word banana in this folder",
    timeout_s: float = 60,
) -> ExecRequest:
    return ExecRequest(
        task_id=f"s1::{variant}::r0",
        sample_id="s1",
        prompt=prompt,
        system=system,
        workspace=workspace,
        skill=skill,
        timeout_s=timeout_s,
    )


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    return system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system or [])


def test_real_tool_calls_failures_usage_and_cost(claude_bin: Path, mock_server: ServerFactory, workspace: Path) -> None:
    srv = mock_server(SEARCH)
    before = sorted(p.name for p in workspace.iterdir())
    result = _run(claude_bin, srv, _request(workspace))
    assert result.ok, result.error
    assert result.output == "banana is in fruits.txt line 2"
    calls = result.trace.invocations()
    assert [c.call.tool for c in calls] == ["Grep", "Grep", "Read", "Bash"]
    grep_hit, grep_miss, read_missing, bash = calls
    assert grep_hit.status is ToolStatus.SUCCESS and "fruits.txt:2:banana split" in grep_hit.result.output  # type: ignore[union-attr]
    assert grep_miss.result is not None and grep_miss.result.error_kind is ErrorKind.EMPTY_SEARCH
    assert read_missing.status is ToolStatus.FAILURE and read_missing.result.error_kind is ErrorKind.NOT_FOUND  # type: ignore[union-attr]
    assert bash.result is not None and bash.result.exit_code == 3 and bash.result.error_kind is ErrorKind.NONZERO_EXIT
    # the agent ran in a private copy with a private HOME, both gone now
    cwd = Path(result.trace.meta["cwd"])
    assert cwd != workspace and f"HOME={cwd.parent / 'home'}" in bash.result.output
    assert "fruits.txt" in bash.result.output and not cwd.parent.exists()
    assert sorted(p.name for p in workspace.iterdir()) == before
    # Grep and Glob are opted in; the tool set is exactly the configured one
    assert set(result.trace.meta["tools"]) == {"Read", "Grep", "Glob", "Bash", "Skill"}
    assert result.trace.meta["mcp_servers"] == [] and result.trace.meta["agent_version"] == "2.1.197"
    # usage and cost from the final result line: 5 model turns of 100 in / 10 out each
    assert (result.usage["input_tokens"], result.usage["output_tokens"]) == (500, 50)
    assert result.num_turns == 5 and result.cost_usd is not None and result.cost_usd > 0
    assert len(srv.model_requests()) == 5  # no title or other side request: only model traffic


def _ab_server(mock_server: ServerFactory, marker: str) -> MockModelServer:
    treatment = {
        "anthropic": [
            {"tool": {"name": "Skill", "input": {"skill": "fruit-finder"}}},
            {"shell": "cat ~/.claude/skills/fruit-finder/references/fruits.md"},
            {"text": "treatment answer"},
        ]
    }
    baseline = {
        "anthropic": [{"shell": "ls -a .claude/skills ~/.claude/skills 2>&1; true"}, {"text": "baseline answer"}]
    }
    return mock_server({marker: treatment, "": baseline})


def test_skill_delivery_baseline_never_sees_the_skill(
    claude_bin: Path, mock_server: ServerFactory, workspace: Path, skill: SkillInstall, skill_marker: str
) -> None:
    # the variant's folder itself holds the skill (as a user's repository would): the copy drops it
    shutil.copytree(skill.source_dir, workspace / ".claude" / "skills" / "fruit-finder")  # type: ignore[arg-type]
    srv = _ab_server(mock_server, skill_marker)
    arms = _run_arms(
        srv,
        {
            "baseline": _request(workspace),
            "treatment": _request(workspace, variant="t", system=skill.text, skill=skill),
        },
        delivery="skill",
    )
    baseline, treatment = arms["baseline"], arms["treatment"]
    assert baseline.trace.meta["cwd"] != treatment.trace.meta["cwd"]  # concurrent tasks, separate copies
    base_bodies, treat_bodies = _bodies_of(srv, baseline), _bodies_of(srv, treatment)
    assert len(base_bodies) == 2 and len(treat_bodies) == 3
    assert not any(skill_marker in b for b in base_bodies) and all(skill_marker in b for b in treat_bodies)
    assert baseline.output == "baseline answer" and treatment.output == "treatment answer"
    assert baseline.trace.invocations()[0].result.output.count("No such file or directory") == 2  # type: ignore[union-attr]
    assert "fruit-finder" not in baseline.trace.meta["skills"]
    assert "fruit-finder" in treatment.trace.meta["skills"]
    skill_call, cat_ref = treatment.trace.invocations()
    assert skill_call.call.tool == "Skill" and skill_call.status is ToolStatus.SUCCESS
    assert cat_ref.result is not None and cat_ref.result.output.strip() == "banana, kiwi, apple"  # whole folder


def test_system_delivery_appends_the_artifact_to_the_default_prompt(
    claude_bin: Path, mock_server: ServerFactory, workspace: Path, skill: SkillInstall, skill_marker: str
) -> None:
    srv = mock_server({"steps": [{"text": "done"}]})
    _run(claude_bin, srv, _request(workspace))
    _run(claude_bin, srv, _request(workspace, variant="t", system=skill.text, skill=skill))
    _run(
        claude_bin,
        srv,
        _request(workspace, variant="t", system=skill.text, skill=skill),
        system_prompt="replace",
        base_system_prompt="Answer briefly.",
    )
    base, appended, replaced = (_system_text(r["body"]) for r in srv.model_requests())
    assert DEFAULT_PROMPT_PHRASE in base and skill_marker not in base
    assert DEFAULT_PROMPT_PHRASE in appended and skill.text.strip() in appended
    assert DEFAULT_PROMPT_PHRASE not in replaced and "Answer briefly." in replaced and skill_marker in replaced
    assert '"role": "user"' in srv.bodies_text()[1] and skill_marker not in json.dumps(
        srv.model_requests()[1]["body"]["messages"]
    )  # delivered as system prompt, not as a skill


def test_api_error_is_an_error_result(claude_bin: Path, mock_server: ServerFactory, workspace: Path) -> None:
    srv = mock_server({"anthropic": [{"http_error": 400, "message": "scripted invalid request"}]})
    result = _run(claude_bin, srv, _request(workspace))
    assert result.error is not None and "400" in result.error and "scripted invalid request" in result.error
    assert len(srv.model_requests()) == 1  # a 400 is not retried


def _sleepers(tag: str) -> list[int]:
    return [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] and "sleep" in p.info["cmdline"][0] and tag in p.info["cmdline"]
    ]


def test_timeout_kills_claude_and_its_tools(claude_bin: Path, mock_server: ServerFactory, workspace: Path) -> None:
    tag = f"{40 + os.getpid() % 50}.{time.time_ns() % 9973}"
    srv = mock_server({"anthropic": [{"shell": f"sleep {tag}"}, {"text": "never"}]})
    started = time.monotonic()
    result = _run(claude_bin, srv, _request(workspace, timeout_s=60), timeout_s=15)  # slack for a loaded machine
    assert time.monotonic() - started < 40
    assert result.error is not None and "timed out after 15s" in result.error and result.timed_out
    assert [c.call.input.get("command") for c in result.trace.invocations()] == [f"sleep {tag}"]  # partial trace
    deadline = time.monotonic() + 5
    while _sleepers(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _sleepers(tag), "the agent's tool process outlived the timeout"


def test_user_level_config_does_not_leak_in(
    claude_bin: Path, mock_server: ServerFactory, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = "PLANTED-SKILL-4411"
    real_home = tmp_path / "real-home"
    (real_home / ".claude" / "skills" / "planted").mkdir(parents=True)
    (real_home / ".claude" / "skills" / "planted" / "SKILL.md").write_text(
        f"---\nname: planted\ndescription: {planted} user skill\n---\nbody\n"
    )
    (real_home / ".claude" / "CLAUDE.md").write_text(f"User memory {planted}\n")
    monkeypatch.setenv("HOME", str(real_home))
    monkeypatch.setenv("KNOWMETER_TEST_SECRET", "s3cret")
    srv = mock_server({"anthropic": [{"shell": "env"}, {"text": "done"}]})

    # the user's skills and memory would be loaded from HOME with the user setting source ...
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(real_home),
        "ANTHROPIC_BASE_URL": srv.anthropic_base_url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    subprocess.run(
        [
            str(claude_bin),
            "-p",
            "hi",
            "--output-format",
            "stream-json",
            "--verbose",
            "--setting-sources",
            "user,project",
            "--tools",
            "Bash,Skill",
            "--allowedTools",
            "Bash",
            "--no-session-persistence",
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert any(planted in b for b in srv.bodies_text()), "control run: the planted skill should be visible"
    n_control = len(srv.model_requests())

    # ... but not through the executor, even with the same setting sources
    result = _run(claude_bin, srv, _request(workspace), setting_sources="user,project", delivery="skill")
    assert result.ok
    assert not any(planted in b for b in srv.bodies_text()[n_control:])
    env_dump = result.trace.invocations()[0].result.output  # type: ignore[union-attr]
    assert "KNOWMETER_TEST_SECRET" not in env_dump and f"HOME={real_home}" not in env_dump
    assert "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1" in env_dump


def test_missing_cli_gives_an_install_hint(tmp_path: Path) -> None:
    with pytest.raises(ExecutorUnavailable, match=r"npm install -g @anthropic-ai/claude-code@2\.1\.197"):
        create_executor(ExecutorSpec("claude", None, {"bin": str(tmp_path / "no-such-claude")}))


def test_identity_names_the_cli_version(claude_bin: Path) -> None:
    ex = create_executor(ExecutorSpec("claude", "claude-sonnet-4-5", {"bin": str(claude_bin), "api_key": "k1"}))
    other_key = create_executor(ExecutorSpec("claude", "claude-sonnet-4-5", {"bin": str(claude_bin), "api_key": "k2"}))
    skill = create_executor(ExecutorSpec("claude", "claude-sonnet-4-5", {"bin": str(claude_bin), "delivery": "skill"}))
    assert "2.1.197" in ex.identity() and ex.identity() == other_key.identity() != skill.identity()
