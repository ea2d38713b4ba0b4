"""The offline demo scaffolded by ``knowmeter init``."""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from knowmeter.errors import InputError


def _walk(node: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out: list[tuple[str, Traversable]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            out.extend(_walk(child, rel + "/"))
        elif child.name != "__pycache__":
            out.append((rel, child))
    return out


def scaffold(directory: Path, *, force: bool = False) -> list[Path]:
    """Copy the demo template into ``directory``; refuses to overwrite unless ``force``."""
    files = _walk(resources.files("knowmeter.demo") / "template")
    targets = [(directory / rel, node) for rel, node in files]
    clashes = [str(t) for t, _ in targets if t.exists()]
    if clashes and not force:
        raise InputError(f"{clashes[0]} already exists ({len(clashes)} file(s) would be overwritten); "
                         "use an empty directory or --force")
    written = []
    for target, node in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(node.read_bytes())
        written.append(target)
    return written
