"""Variant resolution: baseline, names, files, SKILL.md directories, git refs, hashes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from knowmeter.artifacts import resolve_variant
from knowmeter.errors import InputError


def make_skills(root: Path) -> None:
    (root / "skills" / "dirskill" / "ref").mkdir(parents=True)
    (root / "skills" / "dirskill" / "SKILL.md").write_text("# dir skill\nuse ref/a.md\n")
    (root / "skills" / "dirskill" / "ref" / "a.md").write_text("alpha\n")
    (root / "skills" / "flat.md").write_text("flat skill\n")


def resolve(root: Path, expr: str):
    return resolve_variant(expr, role="treatment", skill_dir=Path("skills"), base_dir=root, cache_dir=root / ".c")


def test_forms(tmp_path: Path) -> None:
    make_skills(tmp_path)
    assert resolve(tmp_path, "baseline").is_baseline
    d = resolve(tmp_path, "dirskill")
    assert d.artifact.kind == "skill_dir" and set(d.artifact.files) == {"SKILL.md", "ref/a.md"}
    f = resolve(tmp_path, "flat")
    assert f.artifact.kind == "file" and f.artifact.text == "flat skill\n"
    assert resolve(tmp_path, "skills/dirskill/SKILL.md").artifact.hash == d.artifact.hash
    assert resolve(tmp_path, "skills/flat.md").name == "flat"


def test_hash_covers_every_file_of_a_directory_skill(tmp_path: Path) -> None:
    make_skills(tmp_path)
    before = resolve(tmp_path, "dirskill").artifact.hash
    (tmp_path / "skills" / "dirskill" / "ref" / "a.md").write_text("beta\n")
    assert resolve(tmp_path, "dirskill").artifact.hash != before


def test_unknown_variant_lists_what_exists(tmp_path: Path) -> None:
    make_skills(tmp_path)
    with pytest.raises(InputError) as exc:
        resolve(tmp_path, "nosuch")
    assert "available: baseline, dirskill, flat" in str(exc.value)


def test_the_names_offered_are_the_ones_that_resolve(tmp_path: Path) -> None:
    """A named pipe or a broken link named like a skill was offered as available, then refused."""
    make_skills(tmp_path)
    os.mkfifo(tmp_path / "skills" / "pipe.md")
    (tmp_path / "skills" / "gone.md").symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(InputError) as exc:
        resolve(tmp_path, "pipe")
    assert str(exc.value).endswith("available: baseline, dirskill, flat")


def test_git_ref(tmp_path: Path) -> None:
    make_skills(tmp_path)
    run = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    run("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")
    old = resolve(tmp_path, "dirskill").artifact.hash
    (tmp_path / "skills" / "dirskill" / "SKILL.md").write_text("# changed\n")
    v = resolve(tmp_path, "git:HEAD:dirskill")
    assert v.name == "dirskill@HEAD" and v.artifact.hash == old
    assert resolve(tmp_path, "git:HEAD:flat").artifact.text == "flat skill\n"
    with pytest.raises(InputError, match="available there: dirskill, flat"):
        resolve(tmp_path, "git:HEAD:missing")
