"""Sealed sandboxes, end to end: ``knowmeter eval`` with the real claude / codex CLI, where the
control arm's agent is scripted to go looking for the treatment's artifact (beside its own sandbox,
by absolute path, in the samples) and to write outside its folder, while the treatment's task is
alive. What the agent could *do* is checked: the tool results in its trace and the files on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.agents import executor_model, executor_options
from tests.support.mock_model import ServerFactory

pytestmark = pytest.mark.agents

MARKER = "DAMSON-6092"


def _project(root: Path) -> Path:
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "fruits.txt").write_text("apple\nbanana\n")
    skill = root / "skills" / "fruit-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: fruit-skill\ndescription: fruit facts\n---\n# Fruit {MARKER}\n")
    (root / "eval-samples.yaml").write_text(yaml.safe_dump([{"sample_id": "s1", "prompt": "kiwi?"}]))
    return skill / "SKILL.md"


def _snoop(root: Path, tmp_root: Path) -> str:
    """A shell command that looks for the treatment's artifact everywhere and writes outside."""
    return (
        f"cat ../../knowmeter-*/system.md ../../knowmeter-*/home/.codex/AGENTS.md "
        f"../../knowmeter-*/work/.claude/skills/*/SKILL.md {root}/skills/fruit-skill/SKILL.md "
        f"{root}/eval-samples.yaml 2>&1; ls -a ../.. {tmp_root}; grep -rl {MARKER} {root} {tmp_root} 2>&1; "
        f"cat /proc/*/cwd/../system.md 2>&1 | head -3; "
        f"echo leak > ../../written-outside-1.txt; echo leak > {root}/written-outside-2.txt; "
        f"echo leak > {tmp_root}/written-outside-3.txt; echo own > own.txt && cat own.txt; true"
    )


def _eval(name: str, root: Path, srv: Any, tmp_root: Path, *flags: str) -> dict[str, Any]:
    extra = {"sandbox": "danger-full-access"} if name == "codex" else {}  # only the seal stands in the way
    config = {
        "samples": "eval-samples.yaml",
        "variants": [
            {"name": "baseline", "role": "control", "artifact": "baseline", "cwd": "workspace"},
            {"name": "fruit-skill", "role": "treatment", "artifact": "fruit-skill", "cwd": "workspace"},
        ],
        "executor": {"name": name, "model": executor_model(name), "options": executor_options(name, srv, **extra)},
        "concurrency": 2,
        "timeoutMs": 120_000,
        "noCache": True,
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "TMPDIR": str(tmp_root)}
    r = subprocess.run(
        [sys.executable, "-m", "knowmeter", "eval", "--json", "--report-only", "--retry", "0", *flags],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    report: dict[str, Any] = json.loads(r.stdout)
    report["stderr"] = r.stderr
    return report


def _tool_output(report: dict[str, Any], variant: str) -> str:
    (task,) = [t for t in report["tasks"] if t["variant"] == variant]
    assert task["exec"]["error"] is None, task["exec"]["error"]
    return "\n".join(e.get("output", "") for e in task["exec"]["trace"]["events"] if e["kind"] == "tool_result")


def _left_behind(*folders: Path) -> list[str]:
    return sorted(p.name for f in folders for p in f.iterdir() if p.name.startswith(("written-outside", "knowmeter-")))


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_the_control_agent_cannot_see_the_treatment_or_leave_files(
    name: str, tmp_path: Path, mock_server: ServerFactory
) -> None:
    root, tmp_root = tmp_path / "project", tmp_path / "tmp"
    tmp_root.mkdir()
    _project(root)
    # the treatment's task stays alive (its first model turn takes 4 s) while the control agent snoops
    srv = mock_server(
        {
            MARKER: {"steps": [{"text": "treatment answer", "sleep": 4}]},
            "": {"steps": [{"shell": _snoop(root, tmp_root)}, {"text": "control answer"}]},
        }
    )
    report = _eval(name, root, srv, tmp_root)
    seen = _tool_output(report, "baseline")
    assert MARKER not in seen, seen
    assert "own" in seen.splitlines()  # its own folder is writable
    assert "Read-only file system" in seen  # the project folder is not
    assert "No such file or directory" in seen
    assert report["run"]["executor"]["sealed"] is True
    assert all(t["exec"]["trace"]["meta"]["sealed"] is True for t in report["tasks"])
    assert _left_behind(root, tmp_root) == []  # nothing written outside, no sandbox left


def test_unsealed_is_explicit_and_loud(tmp_path: Path, mock_server: ServerFactory) -> None:
    """The same snooping without the seal (``--unsealed``) does find the treatment's skill text:
    the sealed test above would catch a seal that does not hold."""
    root, tmp_root = tmp_path / "project", tmp_path / "tmp"
    tmp_root.mkdir()
    _project(root)
    srv = mock_server(
        {
            MARKER: {"steps": [{"text": "treatment answer", "sleep": 4}]},
            "": {"steps": [{"shell": _snoop(root, tmp_root)}, {"text": "control answer"}]},
        }
    )
    report = _eval("claude", root, srv, tmp_root, "--unsealed")
    assert MARKER in _tool_output(report, "baseline")
    assert report["run"]["executor"]["sealed"] is False
    assert "UNSEALED" in report["stderr"]
    assert _left_behind(root, tmp_root) == ["written-outside-1.txt", "written-outside-2.txt", "written-outside-3.txt"]
