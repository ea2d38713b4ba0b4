"""The knowledge base's *structure*: its files, their headings, the principles of its
``CLAUDE.md`` / ``AGENTS.md`` and its skills' descriptions — what a probe generator reads
(gap-signal spec §9). The full text is read only to hash the knowledge base and, with
``include_text``, to show it to a model generator."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from knowmeter import defaults
from knowmeter.errors import InputError

ElementKind = Literal["file", "heading", "principle", "skill"]
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst"})
PRINCIPLE_FILES = frozenset({"CLAUDE.md", "AGENTS.md"})
_HEADING = re.compile(r"^ {0,3}(#{1,3})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+(.{8,})$")
_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)
_MAX_ITEM = 200


@dataclass(frozen=True, slots=True)
class KbFile:
    """One knowledge file: ``key`` is its path as the probe names it (relative to the current
    directory when inside it), ``agent_path`` the path an agent working in the knowledge base's
    parent folder would use (``<kb dir name>/<path in it>``), ``text`` its content."""

    key: str
    agent_path: str
    text: str


@dataclass(frozen=True, slots=True)
class KbElement:
    """One structural element a question can be motivated by: ``id`` (``E1``, ``E2``, …, stable
    for the same knowledge base), its kind, the file it is in and its text (a file's name, a
    heading, a principle, a skill's ``name: description``)."""

    id: str
    kind: ElementKind
    file: str
    text: str
    level: int | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.id, "kind": self.kind, "file": self.file, "text": self.text}
        if self.level is not None:
            out["level"] = self.level
        return out


@dataclass(frozen=True, slots=True)
class KbStructure:
    """The structure of the knowledge base under ``roots``, with ``sha256``: the hash of every
    file's path and content (a changed knowledge base gets a new hash)."""

    roots: tuple[str, ...]
    files: tuple[KbFile, ...]
    elements: tuple[KbElement, ...]
    sha256: str

    def file(self, key: str) -> KbFile | None:
        return next((f for f in self.files if f.key == key), None)

    def element(self, element_id: str) -> KbElement | None:
        return next((e for e in self.elements if e.id == element_id), None)


def _walk(directory: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in defaults.IGNORED_DIRS)
        out.extend(
            Path(dirpath, f)
            for f in sorted(filenames)
            if not f.startswith(".") and Path(f).suffix.lower() in TEXT_SUFFIXES
        )
    return out


def _key(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()


def _headings(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            out.append((len(m.group(1)), m.group(2).strip()))
    return out


def _principles(text: str) -> list[str]:
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _ITEM.match(line)
        if m:
            item = " ".join(m.group(1).split())
            out.append(item if len(item) <= _MAX_ITEM else item[: _MAX_ITEM - 1] + "…")
    return out


def _skill(text: str) -> str | None:
    m = _FRONTMATTER.match(text)
    if not m:
        return None
    try:
        meta = yaml.safe_load(m.group(1))
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict):
        return None
    name, desc = meta.get("name"), meta.get("description")
    if not isinstance(desc, str) or not desc.strip():
        return None
    return f"{name}: {' '.join(desc.split())}" if isinstance(name, str) and name else " ".join(desc.split())


def read_structure(dirs: list[Path], *, base: Path | None = None) -> KbStructure:
    """Read the structure of the knowledge base made of ``dirs`` (folders, or single files).
    ``base`` (default: the current directory) is what file keys are relative to. A missing
    folder, or one without text files, raises ``InputError``."""
    base = base or Path.cwd()
    files: list[KbFile] = []
    seen: set[str] = set()
    for d in dirs:
        if not d.exists():
            raise InputError(f"{d}: knowledge base folder not found; pass --kb DIR (a folder of .md/.txt files)")
        paths = [d] if d.is_file() else _walk(d)
        for p in paths:
            key = _key(p, base)
            if key in seen:
                continue
            seen.add(key)
            try:
                text = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(
                    f"{p}: cannot read it as UTF-8 text ({exc}); remove it from the knowledge "
                    "base folder or fix its encoding"
                ) from None
            inner = p.name if d.is_file() else p.relative_to(d).as_posix()
            here = d.resolve() == base.resolve()
            agent_path = inner if here or d.is_file() else f"{d.resolve().name}/{inner}"
            files.append(KbFile(key, agent_path, text))
    if not files:
        raise InputError(
            f"{', '.join(map(str, dirs))}: no knowledge files (.md, .markdown, .txt, .rst) found; "
            "pass --kb DIR pointing at your knowledge base"
        )
    elements: list[KbElement] = []

    def add(kind: ElementKind, file: str, text: str, level: int | None = None) -> None:
        elements.append(KbElement(f"E{len(elements) + 1}", kind, file, text, level))

    for f in files:
        name = Path(f.key).name
        add("file", f.key, name)
        if name == "SKILL.md" and (desc := _skill(f.text)):
            add("skill", f.key, desc)
        fm = _FRONTMATTER.match(f.text)
        body = f.text[fm.end() :] if fm else f.text  # a YAML comment in the frontmatter is no heading
        for level, heading in _headings(body):
            add("heading", f.key, heading, level)
        if name in PRINCIPLE_FILES:
            for item in _principles(body):
                add("principle", f.key, item)
    digest = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.key):
        digest.update(f"{f.key}\0{hashlib.sha256(f.text.encode()).hexdigest()}\n".encode())
    return KbStructure(tuple(_key(d, base) for d in dirs), tuple(files), tuple(elements), digest.hexdigest())
