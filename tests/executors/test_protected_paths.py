"""What a sealed agent must not see, as eval hands it to the executor: every artifact, the samples,
the run store and the project itself (its folder and its git working tree), so the seal can blank
the project where it lies inside a folder an agent does see (/opt/app, a folder the user allowed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from knowmeter.evaluation import Overrides, prepare, protected_paths, resolve_config
from tests.support.cli import init_demo


def test_the_project_and_its_git_working_tree_are_protected(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    demo = init_demo(repository / "evals" / "demo")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    protected = protected_paths(prepare(resolve_config(Overrides(), demo)))
    assert demo.resolve() in protected and repository.resolve() in protected
    assert (demo / "eval-samples.yaml").resolve() in protected
    assert {p.name for p in protected if p.parent == (demo / "skills").resolve()} == {"support-basic", "support-expert"}
