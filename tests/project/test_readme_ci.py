"""Issue 30 point 1: every GitHub Actions workflow of the README fails the job on a run whose every
task failed (an agent without its API key), and passes on a good one. The workflows are read from
the README and run by a small stand-in for the Actions runner: each job (and each matrix entry)
in a fresh copy of the checkout, each ``run`` step with ``bash -e`` as Actions runs it, artifacts
uploaded and downloaded between jobs, ``${{ … }}`` filled in."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import init_demo, km

REPO = Path(__file__).resolve().parents[2]

#: an agent whose every call fails the way a missing API key does
NO_KEY_AGENT = """\
import sys
sys.stderr.write("ANTHROPIC_API_KEY is not set\\n")
sys.exit(1)
"""


def readme_workflows() -> dict[str, Any]:
    """The README's YAML blocks that run knowmeter: a whole workflow, or steps to put in one."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "knowmeter " in b]
    out = {}
    for block in blocks:
        loaded = yaml.safe_load(block)
        name = block.splitlines()[0].lstrip("# ").strip()
        out[name] = loaded if isinstance(loaded, dict) else {"jobs": {"eval": {"steps": loaded}}}
    return out


@dataclass
class Runner:
    """Runs a workflow's jobs one after the other (in ``needs`` order, as listed)."""

    checkout: Path
    work: Path
    env: dict[str, str]
    artifacts: dict[str, Path] = field(default_factory=dict)
    log: list[tuple[str, int, str]] = field(default_factory=list)

    def workflow(self, wf: dict[str, Any]) -> bool:
        """Whether every job succeeded."""
        ok = True
        for name, job in wf["jobs"].items():
            shards = (job.get("strategy") or {}).get("matrix", {}).get("shard") or [None]
            for shard in shards:
                ok = self.job(f"{name}-{shard}", job["steps"], {"matrix.shard": str(shard)}) and ok
        return ok

    def job(self, name: str, steps: list[dict[str, Any]], values: dict[str, str]) -> bool:
        folder = self.work / name
        shutil.copytree(self.checkout, folder, ignore=shutil.ignore_patterns(".knowmeter"))
        ok = True
        for step in steps:
            if not ok and "always()" not in str(step.get("if", "")):
                continue
            uses, with_ = str(step.get("uses", "")), step.get("with") or {}
            if uses.startswith("actions/upload-artifact"):
                paths = str(with_["path"]).split()
                if len(paths) == 1 and (folder / paths[0]).is_dir():
                    self.artifacts[self.fill(with_["name"], values)] = folder / paths[0]
            elif uses.startswith("actions/download-artifact"):
                for art, src in self.artifacts.items():
                    if fnmatch.fnmatch(art, with_["pattern"]):
                        shutil.copytree(src, folder / with_["path"] / art)
            elif "run" in step and not str(step["run"]).startswith("pip install"):
                script = self.fill(str(step["run"]), values)
                done = subprocess.run(
                    ["bash", "-e", "-c", script], cwd=folder, env=self.env, capture_output=True, text=True, timeout=300
                )
                self.log.append((script, done.returncode, done.stdout + done.stderr))
                ok = ok and done.returncode == 0
        return ok

    @staticmethod
    def fill(text: str, values: dict[str, str]) -> str:
        values = {"github.base_ref": "main", **values}
        return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: values[m.group(1)], text)


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def _project(where: Path, agent: str | None) -> Path:
    """The demo as a skill project under git: ``my-skill`` is the basic skill on the base branch
    (``origin/main``) and the expert one in the pull request; the agent is the offline one, or a
    script that fails every task."""
    project = init_demo(where)
    skills = project / "skills"
    shutil.copytree(skills / "support-basic", skills / "my-skill")
    config = project / "eval.yaml"
    text = config.read_text(encoding="utf-8")
    if agent is not None:
        (project / "agent.py").write_text(agent, encoding="utf-8")
        text = text.replace("executor: offline", f"executor: {sys.executable} agent.py\nretry: 0")
    config.write_text(text, encoding="utf-8")
    _git(project, "init", "-q", "-b", "pr")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    _git(project, "update-ref", "refs/remotes/origin/main", "HEAD")
    shutil.rmtree(skills / "my-skill")
    shutil.copytree(skills / "support-expert", skills / "my-skill")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "expert")
    return project


def _runner(project: Path, work: Path) -> Runner:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("ANTHROPIC_API_KEY", None)
    return Runner(project, work, env)


def test_the_readme_has_the_workflows_this_test_runs() -> None:
    names = set(readme_workflows())
    assert names == {
        ".github/workflows/knowmeter.yml",
        ".github/workflows/knowmeter-sharded.yml",
        "- name: eval (fails the job on REGRESS and on any outcome without a trustworthy verdict)",
    }, names


@pytest.mark.slow
@pytest.mark.parametrize("workflow", sorted(readme_workflows()))
def test_every_readme_workflow_fails_a_run_whose_every_task_failed(workflow: str, tmp_path: Path) -> None:
    runner = _runner(_project(tmp_path / "project", NO_KEY_AGENT), tmp_path / "jobs")
    assert not runner.workflow(readme_workflows()[workflow])
    script, code, output = next(entry for entry in runner.log if entry[1] != 0)
    assert "knowmeter" in script and code == 1, (script, code, output[-3000:])
    assert "NOT MEASURED" in output or "NOT MEASURED" in "".join(o for _, _, o in runner.log)
    assert "ANTHROPIC_API_KEY is not set" in "".join(o for _, _, o in runner.log)
    job = tmp_path / "jobs" / ("merge-None" if workflow.endswith("sharded.yml") else "eval-None")
    listed = json.loads(km("runs", "--json", cwd=job).stdout)[0]
    assert (listed["outcome"], listed["verdict"]) == ("NOT MEASURED", None)  # no verdict where none was measured


@pytest.mark.slow
@pytest.mark.parametrize("workflow", sorted(readme_workflows()))
def test_every_readme_workflow_passes_a_good_run(workflow: str, tmp_path: Path) -> None:
    runner = _runner(_project(tmp_path / "project", None), tmp_path / "jobs")
    ok = runner.workflow(readme_workflows()[workflow])
    assert ok, [(s, c, o[-2000:]) for s, c, o in runner.log if c]
    assert any("PROGRESS · my-skill vs" in o for _, _, o in runner.log) or workflow.endswith("sharded.yml")
