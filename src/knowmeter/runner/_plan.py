"""Planning: the tasks of a run (sample × variant × repeat), interleaved, with stable ids."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from knowmeter.artifacts import Variant
from knowmeter.samples import Sample


@dataclass(frozen=True, slots=True)
class Task:
    """The unit of execution, caching and resume."""

    sample: Sample
    variant: Variant
    repeat: int
    workspace: Path

    @property
    def id(self) -> str:
        return task_id(self.sample.sample_id, self.variant.name, self.repeat)


def task_id(sample_id: str, variant: str, repeat: int) -> str:
    """Deterministic task id: the same sample, variant and repeat always get the same id. The id
    is unambiguous because neither name may hold ``::`` or start or end with ``:``
    (``knowmeter.samples.id_name_problem``): two different tasks never share an id."""
    return f"{sample_id}::{variant}::r{repeat}"


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


_IGNORED = {".git", ".knowmeter", "node_modules", "__pycache__", ".venv"}


def directory_fingerprint(root: Path) -> str:
    """sha256 over every file's relative path, size and content hash (for the cache key): an
    agent working in an edited folder must not get a cached answer."""
    h = hashlib.sha256()
    if not root.is_dir():
        return "missing"
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _IGNORED for part in rel.parts) or not path.is_file():
            continue
        h.update(rel.as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()
