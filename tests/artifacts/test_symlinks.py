"""Symlinks leaving a skill folder are refused; a custom assertion outside the project warns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knowmeter.artifacts import artifact_from_dir
from knowmeter.errors import InputError
from tests.support.cli import km, km_process


@pytest.mark.parametrize("link", ["SKILL.md", "ref.md", "sub"])
def test_a_symlink_out_of_the_skill_folder_is_refused(tmp_path: Path, link: str) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0")
    skill = tmp_path / "skill"
    skill.mkdir()
    if link != "SKILL.md":
        (skill / "SKILL.md").write_text("# skill")
    os.symlink(outside if link == "sub" else outside / "passwd", skill / link)
    with pytest.raises(InputError, match="outside the skill folder"):
        artifact_from_dir(skill)


def test_a_symlink_inside_the_skill_folder_is_fine(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("# skill")
    os.symlink(skill / "SKILL.md", skill / "alias.md")
    assert set(artifact_from_dir(skill).files) == {"SKILL.md", "alias.md"}


@pytest.mark.slow
def test_the_cli_refuses_in_one_line_and_warns_about_outside_custom_code(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "skills" / "evil").mkdir(parents=True)
    os.symlink("/etc/passwd", project / "skills" / "evil" / "SKILL.md")
    (project / "s.json").write_text('[{"sample_id": "a", "prompt": "p"}]')
    r = km("eval", "--samples", "s.json", "--control", "baseline", "--treatment", "evil", cwd=project)
    assert r.returncode == 2 and "outside the skill folder" in r.stderr and "root:" not in r.stderr, r.stderr
    (tmp_path / "check.py").write_text("def ok(output, **kw):\n    return True\n")
    (project / "s.json").write_text(
        '[{"sample_id": "a", "prompt": "p", "assertions": [{"type": "custom", "fn": "../check.py:ok"}]}]'
    )
    # a real process: the warning is a log record, which pytest would capture in-process
    proc = km_process("eval", "--samples", "s.json", "--control", "baseline", cwd=project)
    assert proc.returncode in (0, 1), proc.stderr
    assert "custom assertion fn:" in proc.stderr and "is outside the project" in proc.stderr
