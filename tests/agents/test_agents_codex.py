"""The ``codex`` executor end to end: the real Codex CLI (pinned in tests/agents/package.json) against
the scripted model server."""

from __future__ import annotations

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
from tests.support.agents import executor_model, executor_options
from tests.support.mock_model import MockModelServer, ServerFactory

pytestmark = pytest.mark.agents

MODEL = executor_model("codex")  # a slug codex knows (an unknown one adds a warning item to the stream)
FAILURES = {
    "openai": [
        {"shell": "grep -rn banana ."},
        {"shell": "grep -rn kiwi ."},
        {"shell": "cat missing.txt"},
        {"shell": "echo HOME=$HOME; exit 3"},
        {"shell": "echo hi > created.txt && cat created.txt"},
        {"text": "banana is in ./fruits.txt line 2"},
    ]
}


def _run(codex_bin: Path, srv: MockModelServer, request: ExecRequest, **options: Any) -> ExecResult:
    spec = ExecutorSpec("codex", MODEL, executor_options("codex", srv, bin=str(codex_bin), **options))
    return anyio.run(create_executor(spec).run, request)


def _request(
    workspace: Path,
    *,
    variant: str = "baseline",
    system: str | None = None,
    skill: SkillInstall | None = None,
    timeout_s: float = 60,
) -> ExecRequest:
    return ExecRequest(
        task_id=f"s1::{variant}::r0",
        sample_id="s1",
        prompt="find the word banana in this folder",
        system=system,
        workspace=workspace,
        skill=skill,
        timeout_s=timeout_s,
    )


def test_shell_calls_failures_and_the_blocked_write_from_the_rollout(
    codex_bin: Path, mock_server: ServerFactory, workspace: Path
) -> None:
    srv = mock_server(FAILURES)
    result = _run(codex_bin, srv, _request(workspace))
    assert result.ok, result.error
    assert result.output == "banana is in ./fruits.txt line 2"
    calls = result.trace.invocations()
    assert [c.call.input["command"] for c in calls] == [s["shell"] for s in FAILURES["openai"][:5]]
    assert all(c.call.tool == "Bash" for c in calls)
    hit, miss, missing, exit3, blocked = calls
    assert hit.status is ToolStatus.SUCCESS
    assert miss.result is not None and miss.result.error_kind is ErrorKind.EMPTY_SEARCH
    assert missing.result is not None and missing.result.error_kind is ErrorKind.NOT_FOUND
    assert exit3.result is not None and exit3.result.exit_code == 3
    # the read-only sandbox blocked the write; codex 0.169 mostly leaves it out of `exec --json` (then
    # only the rollout has it, and it is recovered from there) but not always (measured: 1 run in 4
    # under load); either way it is in the trace exactly once (the call list above)
    assert blocked.status is ToolStatus.FAILURE and "Read-only file system" in blocked.result.output  # type: ignore[union-attr]
    assert result.trace.meta["recovered_calls"] in (0, 1) and result.trace.meta["rollouts"] == 1
    cwd = Path(result.trace.meta["cwd"])
    assert cwd != workspace and f"HOME={cwd.parent / 'home'}" in exit3.result.output
    assert not cwd.parent.exists() and not (workspace / "created.txt").exists()
    assert (result.usage["input_tokens"], result.usage["output_tokens"]) == (600, 60)
    assert result.cost_usd is None and result.num_turns == 6


def test_workspace_write_sandbox_writes_only_the_copy(
    codex_bin: Path, mock_server: ServerFactory, workspace: Path
) -> None:
    srv = mock_server({"openai": [{"shell": "echo hi > created.txt && cat created.txt"}, {"text": "ok"}]})
    result = _run(codex_bin, srv, _request(workspace), sandbox="workspace-write")
    write = result.trace.invocations()[0]
    assert write.status is ToolStatus.SUCCESS and write.result.output.strip() == "hi"  # type: ignore[union-attr]
    assert result.trace.meta["recovered_calls"] == 0 and not (workspace / "created.txt").exists()


def _ab(
    codex_bin: Path, srv: MockModelServer, workspace: Path, skill: SkillInstall, **options: Any
) -> tuple[ExecResult, ExecResult, int]:
    baseline = _run(codex_bin, srv, _request(workspace), **options)
    n_baseline = len(srv.model_requests())
    treatment = _run(codex_bin, srv, _request(workspace, variant="t", system=skill.text, skill=skill), **options)
    return baseline, treatment, n_baseline


def test_skill_delivery_baseline_never_sees_the_skill(
    codex_bin: Path, mock_server: ServerFactory, workspace: Path, skill: SkillInstall, skill_marker: str
) -> None:
    for folder in (".agents", ".codex"):  # the variant's folder itself holds the skill: the copy drops it
        shutil.copytree(skill.source_dir, workspace / folder / "skills" / "fruit-finder")  # type: ignore[arg-type]
    srv = mock_server(
        {
            skill_marker: {
                "openai": [
                    {"shell": "cat .agents/skills/fruit-finder/references/fruits.md"},
                    {"text": "treatment answer"},
                ]
            },
            "": {"openai": [{"shell": "ls -a .agents/skills .codex/skills 2>&1; true"}, {"text": "baseline answer"}]},
        }
    )
    baseline, treatment, n_baseline = _ab(codex_bin, srv, workspace, skill, delivery="skill")
    bodies = srv.bodies_text()
    assert n_baseline == 2 and not any(skill_marker in b for b in bodies[:n_baseline])
    assert all(skill_marker in b for b in bodies[n_baseline:])  # listed in codex's skills instructions
    assert baseline.output == "baseline answer" and treatment.output == "treatment answer"
    assert baseline.trace.invocations()[0].result.output.count("No such file or directory") == 2  # type: ignore[union-attr]
    assert treatment.trace.invocations()[0].result.output.strip() == "banana, kiwi, apple"  # type: ignore[union-attr]


def test_agents_md_delivery(
    codex_bin: Path, mock_server: ServerFactory, workspace: Path, skill: SkillInstall, skill_marker: str
) -> None:
    (workspace / "AGENTS.md").write_text("PROJECT-RULES-19: be terse\n")
    srv = mock_server({"openai": [{"text": "done"}]})
    _, _, n_baseline = _ab(codex_bin, srv, workspace, skill)
    base, treat = srv.bodies_text()
    assert n_baseline == 1 and skill_marker not in base and skill_marker in treat
    assert "PROJECT-RULES-19" in base and "PROJECT-RULES-19" in treat  # the project's own file, in both arms
    assert (workspace / "AGENTS.md").read_text() == "PROJECT-RULES-19: be terse\n"


def test_api_error_is_an_error_result(codex_bin: Path, mock_server: ServerFactory, workspace: Path) -> None:
    srv = mock_server({"openai": [{"http_error": 400, "message": "scripted invalid request"}]})
    result = _run(codex_bin, srv, _request(workspace))
    assert result.error is not None and "scripted invalid request" in result.error
    assert len(srv.model_requests()) == 1


def test_timeout_kills_codex_and_its_commands(codex_bin: Path, mock_server: ServerFactory, workspace: Path) -> None:
    tag = f"{40 + os.getpid() % 50}.{time.time_ns() % 9973}"
    srv = mock_server({"openai": [{"shell": f"sleep {tag}"}, {"text": "never"}]})
    started = time.monotonic()
    result = _run(codex_bin, srv, _request(workspace), timeout_s=4)
    assert time.monotonic() - started < 20
    assert result.error is not None and "timed out after 4s" in result.error

    def sleepers() -> list[int]:
        return [p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] and tag in p.info["cmdline"]]

    deadline = time.monotonic() + 5
    while sleepers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sleepers()


def test_user_level_skills_and_instructions_do_not_leak_in(
    codex_bin: Path, mock_server: ServerFactory, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = "PLANTED-CODEX-5522"
    real_home = tmp_path / "real-home"
    for root in (real_home / ".agents" / "skills", real_home / ".codex" / "skills"):
        (root / "planted").mkdir(parents=True)
        (root / "planted" / "SKILL.md").write_text(f"---\nname: planted\ndescription: {planted}\n---\nbody\n")
    (real_home / ".codex" / "AGENTS.md").write_text(f"global rules {planted}\n")
    monkeypatch.setenv("HOME", str(real_home))
    monkeypatch.setenv("CODEX_HOME", str(real_home / ".codex"))
    srv = mock_server({"openai": [{"text": "done"}]})

    # control: the same CLI run with the real HOME shows the planted skill and instructions
    assert MODEL is not None
    spec = f'model_providers.m={{name="m",base_url="{srv.openai_base_url}",wire_api="responses",request_max_retries=0}}'
    subprocess.run(
        [
            str(codex_bin),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-m",
            MODEL,
            "-c",
            "model_provider=m",
            "-c",
            spec,
            "-c",
            "analytics.enabled=false",
            "--disable",
            "plugins",
            "hi",
        ],
        cwd=workspace,
        env={"PATH": os.environ["PATH"], "HOME": str(real_home), "CODEX_HOME": str(real_home / ".codex")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert srv.bodies_text()[0].count(planted) >= 2

    result = _run(codex_bin, srv, _request(workspace))
    assert result.ok and len(srv.bodies_text()) == 2 and planted not in srv.bodies_text()[1]


def test_missing_cli_gives_an_install_hint(tmp_path: Path) -> None:
    with pytest.raises(ExecutorUnavailable, match=r"npm install -g @openai/codex@0\.169\.0"):
        create_executor(ExecutorSpec("codex", None, {"bin": str(tmp_path / "no-such-codex")}))
