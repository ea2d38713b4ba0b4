"""The runner and executor extension activation needs: a task's extra skills reach the request,
are installed beside the variant's skill, and are part of the cache key."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.artifacts import Artifact, Variant
from knowmeter.executors import SkillInstall
from knowmeter.executors._isolation import install_skills
from knowmeter.runner import Budget, Task
from knowmeter.runner._cache import cache_key
from knowmeter.runner._execute import ExecutionSettings, build_request
from knowmeter.samples import Sample


def _skill(name: str, folder: str | None = None) -> SkillInstall:
    return SkillInstall(folder or name, None, f"---\nname: {name}\ndescription: d {name}\n---\nbody {name}\n")


def test_task_skills_reach_the_request(tmp_path: Path) -> None:
    variant = Variant("A", "control", Artifact(kind="file", text=_skill("s").text, hash="h"), "s.md")
    extra = (_skill("d1"), _skill("d2"))
    task = Task(Sample(sample_id="c1", prompt="p"), variant, 0, tmp_path, skills=extra)
    request = build_request(task, ExecutionSettings(), Budget(None, None))
    assert request.extra_skills == extra and request.skill is not None and request.skill.name == "A"
    plain = Task(Sample(sample_id="c1", prompt="p"), variant, 0, tmp_path)
    assert build_request(plain, ExecutionSettings(), Budget(None, None)).extra_skills == ()


def test_install_skills_puts_every_skill_beside_the_variants(tmp_path: Path) -> None:
    install_skills(tmp_path, _skill("s"), (_skill("d1"), _skill("d2")))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d1", "d2", "s"]
    assert "body d1" in (tmp_path / "d1" / "SKILL.md").read_text()
    install_skills(tmp_path / "none", None, ())
    assert not (tmp_path / "none").exists()


def test_two_skills_in_one_folder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="two skills of one task install as 's'"):
        install_skills(tmp_path, _skill("s"), (_skill("s", folder="other"),))


def test_cache_key_depends_on_the_extra_skills_and_keeps_old_keys() -> None:
    base = dict(
        executor="e",
        model=None,
        variant="A",
        artifact_hash="h",
        prompt="p",
        context=None,
        workspace_fingerprint="w",
        repeat=0,
    )
    old = cache_key(**base)  # type: ignore[arg-type]
    assert cache_key(**base, skills=[]) == old  # type: ignore[arg-type]
    assert cache_key(**base, skills=["x"]) != old != cache_key(**base, skills=["y"])  # type: ignore[arg-type]
