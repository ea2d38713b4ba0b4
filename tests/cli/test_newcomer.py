"""Issue 30 point 11: what a newcomer trips over — the run store in git, eval.yaml's variant
names on the command line, a config file given as an argument, what the composite is."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import init_demo, km


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = init_demo(tmp_path / "demo")
    config = project / "eval.yaml"
    # variants named otherwise than their skills: the names are what a user types next
    text = config.read_text().replace("- name: support-basic", "- name: old")
    config.write_text(text.replace("- name: support-expert", "- name: new"))
    return project


@pytest.mark.slow
def test_the_run_store_is_ignored_by_git(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    assert km("eval", "-q", cwd=project).returncode == 0
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True).stdout
    assert ".knowmeter" not in status and "eval.yaml" in status, status
    assert (project / ".knowmeter" / ".gitignore").read_text().splitlines()[-1] == "*"


@pytest.mark.slow
def test_control_and_treatment_take_the_variant_names_of_eval_yaml(project: Path) -> None:
    r = km("eval", "--control", "old", "--treatment", "new", cwd=project, env={"COLUMNS": "120"})
    assert r.returncode == 0, r.stderr
    [run] = (project / ".knowmeter" / "runs").iterdir()
    variants = json.loads((run / "run.json").read_text())["variants"]
    assert [(v["name"], v["role"], Path(v["path"]).parent.name, v["cwd"] is not None) for v in variants] == [
        ("old", "control", "support-basic", True),
        ("new", "treatment", "support-expert", True),
    ]
    # and the summary says what the composite is, and what it is not
    text = " ".join(r.stdout.split())
    assert "composite = equal-weight mean of the layers present" in text
    assert "not an absolute score: the equal weights are arbitrary, the layers' scales differ" in text


def test_a_config_given_as_an_argument_names_the_option_to_use(project: Path) -> None:
    r = km("eval", "eval.yaml", cwd=project)
    assert r.returncode == 2
    assert "eval takes no file argument — pass eval.yaml with --config FILE" in " ".join(r.stderr.split())
