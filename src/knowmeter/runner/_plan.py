"""Planning: the tasks of a run (sample × variant × repeat), interleaved, with stable ids."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from knowmeter import defaults
from knowmeter._folders import system_folder
from knowmeter.artifacts import Variant
from knowmeter.executors import SkillInstall
from knowmeter.samples import Sample
from knowmeter.store import task_id


@dataclass(frozen=True, slots=True)
class Task:
    """The unit of execution, caching and resume."""

    sample: Sample
    variant: Variant
    repeat: int
    workspace: Path
    #: skills installed beside the variant's (an activation case's distractors); part of the cache key
    skills: tuple[SkillInstall, ...] = field(default=(), compare=False)

    @property
    def id(self) -> str:
        return task_id(self.sample.sample_id, self.variant.name, self.repeat)


def plan_tasks(samples: tuple[Sample, ...], variants: list[Variant], repeat: int, base_dir: Path) -> list[Task]:
    """Tasks interleaved repeat-major, then sample, then variant, so the arms of one sample run
    side by side in time (drift in the agent's service hits both arms alike)."""
    tasks = []
    for r in range(repeat):
        for sample in samples:
            for variant in variants:
                tasks.append(Task(sample, variant, r, workspace_for(sample, variant, base_dir)))
    return tasks


def workspace_for(sample: Sample, variant: Variant, base_dir: Path) -> Path:
    """The directory the agent works in: the sample's ``cwd``, else the variant's, else the
    configuration's folder."""
    if sample.cwd:
        p = Path(sample.cwd)
        return p if p.is_absolute() else (base_dir / p).resolve()
    if variant.cwd is not None:
        return variant.cwd
    return base_dir


#: A workspace may hold at most this many files / bytes (it is fingerprinted for the cache key).
MAX_WORKSPACE_FILES = 20_000
MAX_WORKSPACE_BYTES = 1 << 30


def workspace_problem(root: Path) -> str | None:
    """Why ``root`` cannot be an agent's workspace (a system folder; more files or bytes than the
    fingerprint limits), or None. Symlinks and ``..`` are resolved first."""
    real = root.resolve()
    if system_folder(real) is not None:
        return f"resolves to the system folder {real}; point cwd at a project folder"
    files = size = 0
    stack = [real]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.name in defaults.IGNORED_DIRS:
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                files += 1
                size += entry.stat(follow_symlinks=False).st_size
                if files > MAX_WORKSPACE_FILES or size > MAX_WORKSPACE_BYTES:
                    return (
                        f"holds more than {MAX_WORKSPACE_FILES:,} files or {MAX_WORKSPACE_BYTES >> 20:,} MB "
                        "(too big to fingerprint for the cache); point cwd at a smaller project folder"
                    )
    return None


def directory_fingerprint(root: Path) -> str:
    """sha256 over every file's relative path, size and content hash (for the cache key): an
    agent working in an edited folder must not get a cached answer."""
    h = hashlib.sha256()
    if not root.is_dir():
        return "missing"
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in defaults.IGNORED_DIRS for part in rel.parts) or not path.is_file():
            continue
        h.update(rel.as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()
