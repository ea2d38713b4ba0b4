"""A skill's eval file and an eval file's skill are found where the layout puts them, also when
the skill library lies inside a git repository (``knowmeter init demo`` run in a checkout): the
``skills/`` folder's parent is looked in before the repository root. Lint and ``comprehend``
look in the same places (``find_case_files``); a skill whose eval file is missing is still an
error for both."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from knowmeter.comprehension._inputs import load_inputs
from knowmeter.demo import scaffold
from knowmeter.errors import InputError
from knowmeter.skillgraph import find_case_files, lint_paths, load_skill

SKILL = Path("comprehension/skills/refund-policy/SKILL.md")
EVALS = Path("comprehension/evals/refund-policy.json")


@pytest.fixture(params=["inside-git", "outside-git"])
def demo(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """``knowmeter init demo`` run in a fresh git repository, or in a folder outside any."""
    base = tmp_path / "r"
    base.mkdir()
    if request.param == "inside-git":
        subprocess.run(["git", "init", "-q", str(base)], check=True)
    scaffold(base / "demo")
    return base / "demo"


def test_the_demo_skill_lints_clean_and_brings_its_eval_file(demo: Path) -> None:
    result = lint_paths([demo / SKILL])
    assert result.findings == [] and result.unreadable == []
    assert [p.resolve() for p in result.eval_files] == [(demo / EVALS).resolve()]
    # the eval file alone finds its skill the same way (no skill-not-found warning)
    alone = lint_paths([demo / EVALS])
    assert alone.findings == [] and alone.eval_files == [demo / EVALS]


def test_comprehend_without_evals_finds_the_same_file(demo: Path) -> None:
    assert find_case_files(load_skill(demo / SKILL)) == [(demo / EVALS).resolve()]
    inputs = load_inputs(demo / SKILL, None, n=6)
    assert inputs.case_file.path.resolve() == (demo / EVALS).resolve() and len(inputs.cases) == 5


def test_cli_lint_of_the_demo_skill_exits_0(demo: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "knowmeter", "skill", "lint", str(SKILL)],
        cwd=demo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("0 error(s), 0 warning(s) in 1 skill(s) and 1 eval file(s)")


def test_a_missing_eval_file_is_still_an_error(demo: Path) -> None:
    (demo / EVALS).unlink()
    (hit,) = lint_paths([demo / SKILL]).findings
    assert hit.rule == "eval-artifacts" and hit.severity == "error"
    library = (demo / "comprehension").resolve()
    assert str(library / "evals") in hit.message  # names the folders it looked in
    with pytest.raises(InputError, match="no eval file found for skill 'refund-policy'"):
        load_inputs(demo / SKILL, None, n=6)


def test_an_eval_file_of_another_skill_does_not_count(demo: Path) -> None:
    moved = demo / "comprehension" / "evals" / "other.json"
    data = json.loads((demo / EVALS).read_text(encoding="utf-8"))
    (demo / EVALS).unlink()
    moved.write_text(json.dumps({**data, "skill_name": "billing-plans"}), encoding="utf-8")
    assert [f.rule for f in lint_paths([demo / SKILL]).findings] == ["eval-artifacts"]
    # renamed but naming the skill: found by its skill_name, by lint and comprehend alike
    moved.write_text(json.dumps(data), encoding="utf-8")
    assert find_case_files(load_skill(demo / SKILL)) == [moved.resolve()]
    assert lint_paths([demo / SKILL]).findings == []


def test_the_repository_root_is_still_looked_in(tmp_path: Path) -> None:
    """A skill library in a subfolder whose eval file sits at the repository root's evals/."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    scaffold(tmp_path / "demo")
    root_evals = tmp_path / "evals" / "refund-policy.json"
    root_evals.parent.mkdir()
    (tmp_path / "demo" / EVALS).rename(root_evals)
    assert find_case_files(load_skill(tmp_path / "demo" / SKILL)) == [root_evals]
    assert lint_paths([tmp_path / "demo" / SKILL]).findings == []


def test_a_skills_folder_above_the_repository_is_not_looked_in(tmp_path: Path) -> None:
    """``~/skills/myrepo`` holding a git repository: ``~/evals/`` is not this skill's."""
    repo = tmp_path / "skills" / "myrepo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    scaffold(tmp_path / "demo")
    (tmp_path / "demo" / SKILL).parent.rename(repo / "refund-policy")
    (tmp_path / "evals").mkdir()
    (tmp_path / "demo" / EVALS).rename(tmp_path / "evals" / "refund-policy.json")
    assert find_case_files(load_skill(repo / "refund-policy" / "SKILL.md")) == []
