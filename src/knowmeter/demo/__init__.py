"""The projects ``knowmeter init`` scaffolds — the offline demo (``template/``), or a blank
starter for one's own skill (``blank/``, ``init --blank``) — plus the JSON Schemas of eval.yaml
and sample files that their files name in their ``yaml-language-server`` line."""

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


def scaffold(directory: Path, *, force: bool = False, blank: bool = False) -> list[Path]:
    """Copy the demo template (the blank starter with ``blank``) and the eval / sample-file
    schemas into ``directory``; refuses to overwrite unless ``force``."""
    from knowmeter.schemas import PROJECT_SCHEMAS, SCHEMAS, shipped_text

    source = resources.files("knowmeter.demo") / ("blank" if blank else "template")
    files = [(rel, node.read_bytes()) for rel, node in _walk(source)]
    files += [(SCHEMAS[name][1], shipped_text(name).encode()) for name in PROJECT_SCHEMAS]
    targets = [(directory / rel, content) for rel, content in files]
    clashes = [str(t) for t, _ in targets if t.exists()]
    if clashes and not force:
        raise InputError(
            f"{clashes[0]} already exists ({len(clashes)} file(s) would be overwritten); "
            "use an empty directory or --force"
        )
    written = []
    for target, content in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(target)
    return written
