"""Issue 30 points 2 and 3: a script agent named by a relative path runs from the folder it was
given in, wherever the task's workspace is (``eval`` with variants' ``cwd``, ``comprehend``), and
editing the agent's file changes its cache key — a stale cached answer is never served."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from knowmeter.executors import ExecutorSpec, create_executor
from tests.support.cli import init_demo, km, km_process

AGENT = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"output": "VERSION-1 refunds within 30 days", "costUSD": 0.0}))
"""


def _agent(path: Path, text: str = AGENT) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{text}", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _outputs(project: Path) -> list[str]:
    report = json.loads(km("report", "latest", "--json", cwd=project).stdout)
    return [t["exec"]["error"] or t["exec"]["output"] for t in report["tasks"]]


def test_a_relative_command_is_resolved_against_the_folder_it_was_given_in(tmp_path: Path) -> None:
    agent = _agent(tmp_path / "bin" / "agent.py")
    elsewhere = tmp_path / "workspace"
    elsewhere.mkdir()
    for command in ("./bin/agent.py", "bin/agent.py", f"{sys.executable} bin/agent.py"):
        ex = create_executor(ExecutorSpec(command, base_dir=str(tmp_path)))
        assert str(agent) in ex.argv, (command, ex.argv)  # type: ignore[attr-defined]
    # an option and a file that is not in the folder stay as they are
    ex = create_executor(ExecutorSpec(f"{sys.executable} -u bin/agent.py data.json", base_dir=str(tmp_path)))
    assert ex.argv == [sys.executable, "-u", str(agent), "data.json"]  # type: ignore[attr-defined]
    # a missing program names where it was looked for, before any task runs
    from knowmeter.executors import UnknownExecutor

    with pytest.raises(UnknownExecutor, match=f"not found or not executable: {tmp_path}/bin/nope.py"):
        create_executor(ExecutorSpec("./bin/nope.py", base_dir=str(tmp_path)))


def test_editing_the_agent_changes_its_cache_key_but_moving_the_project_does_not(tmp_path: Path) -> None:
    agent = _agent(tmp_path / "a" / "agent.py")
    before = create_executor(ExecutorSpec("./agent.py", base_dir=str(agent.parent))).identity()
    shutil.copytree(tmp_path / "a", tmp_path / "moved")
    moved = create_executor(ExecutorSpec("./agent.py", base_dir=str(tmp_path / "moved"))).identity()
    _agent(agent, AGENT.replace("VERSION-1", "VERSION-2"))
    after = create_executor(ExecutorSpec("./agent.py", base_dir=str(agent.parent))).identity()
    assert before == moved and before != after and after.startswith("script:./agent.py files:")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["./agent.py", f"{sys.executable} agent.py"])
def test_eval_runs_a_relative_agent_in_the_variants_cwd(tmp_path: Path, command: str) -> None:
    project = init_demo(tmp_path / "demo")  # its variants run in cwd: workspace
    _agent(project / "agent.py")
    r = km("eval", "--executor", command, "--retry", "0", "-q", cwd=project)
    assert "NOT MEASURED" not in r.stdout, r.stdout
    outputs = _outputs(project)
    assert len(outputs) == 46 and all(o.startswith("VERSION-1") for o in outputs), outputs[:2]


@pytest.mark.slow
def test_eval_with_a_config_elsewhere_resolves_the_flag_against_the_shell_folder(tmp_path: Path) -> None:
    project = init_demo(tmp_path / "demo")
    _agent(tmp_path / "agent.py")
    r = km("eval", "--config", "demo/eval.yaml", "--executor", "./agent.py", "--retry", "0", "-q", cwd=tmp_path)
    assert "NOT MEASURED" not in r.stdout, r.stdout
    assert all(o.startswith("VERSION-1") for o in _outputs(project))


@pytest.mark.slow
def test_an_edited_agent_outside_the_workspace_is_run_again_not_served_from_the_cache(tmp_path: Path) -> None:
    project = init_demo(tmp_path / "demo")
    agent = _agent(tmp_path / "agents" / "agent.py")  # outside the project: no workspace fingerprint covers it
    command = os.path.relpath(agent, project)
    assert km("eval", "--executor", command, "-q", cwd=project).returncode in (0, 1)
    assert all(o.startswith("VERSION-1") for o in _outputs(project))
    _agent(agent, AGENT.replace("VERSION-1", "VERSION-2"))
    assert km("eval", "--executor", command, "-q", cwd=project).returncode in (0, 1)
    report = json.loads(km("report", "latest", "--json", cwd=project).stdout)
    assert not any(t.get("cached") for t in report["tasks"])
    assert all(o.startswith("VERSION-2") for o in _outputs(project))


@pytest.mark.slow
def test_comprehend_runs_a_relative_agent(tmp_path: Path, shared_dir: Path) -> None:
    graph = shared_dir / "reference" / "skill-graph"
    skill = tmp_path / "skills" / "type-safety"
    skill.mkdir(parents=True)
    shutil.copy(graph / "skills" / "type-safety" / "SKILL.md", skill / "SKILL.md")
    (tmp_path / "evals").mkdir()
    shutil.copy(graph / "evals" / "type-safety.json", tmp_path / "evals" / "type-safety.json")
    _agent(tmp_path / "agent.py")
    r = km_process(
        "comprehend",
        "skills/type-safety/SKILL.md",
        "--evals",
        "evals/type-safety.json",
        "--judge",
        "scripted-grader",
        "--executor",
        "./agent.py",
        "--json",
        cwd=tmp_path,
    )
    assert "executor command not found" not in r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["tasks"] and all(t["exec"]["error"] is None for t in report["tasks"]), report["tasks"][0]["exec"]
