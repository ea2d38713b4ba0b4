"""Variants: named knowledge artifacts under test, resolved from omk-style expressions.

Expressions: ``baseline`` (no artifact), ``<name>`` (``<skill-dir>/<name>.md`` or
``<skill-dir>/<name>/SKILL.md``), a path to a ``.md`` file, a ``SKILL.md`` or a skill directory,
and ``git:<ref>:<name>`` (the same lookup at a git revision).
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from knowmeter import defaults
from knowmeter.errors import InputError

Role = Literal["control", "treatment"]
ArtifactKind = Literal["baseline", "file", "skill_dir"]


@dataclass(frozen=True, slots=True)
class Artifact:
    """The knowledge under test. ``text`` is what goes into the system prompt (SKILL.md or the
    .md file); ``root`` is the directory of a directory skill (all of its files are part of it);
    ``files`` maps each file (relative to ``root`` or the file's folder) to its sha256;
    ``hash`` covers every file, so editing any reference file of a skill changes it."""

    kind: ArtifactKind
    text: str | None = None
    path: Path | None = None
    root: Path | None = None
    files: dict[str, str] = field(default_factory=dict)
    hash: str = "baseline"


@dataclass(frozen=True, slots=True)
class Variant:
    """A named artifact with its role and (optional) working directory."""

    name: str
    role: Role
    artifact: Artifact
    expression: str
    cwd: Path | None = None

    @property
    def is_baseline(self) -> bool:
        return self.artifact.kind == "baseline"


BASELINE = Artifact(kind="baseline")


def _iter_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*") if p.is_file() and not any(part in defaults.ARTIFACT_IGNORED for part in p.parts)
    )


def hash_files(files: dict[str, bytes]) -> tuple[dict[str, str], str]:
    """Per-file sha256 and one hash over ``(relative path, content hash)`` pairs, sorted."""
    per_file = {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}
    h = hashlib.sha256()
    for rel in sorted(per_file):
        h.update(rel.encode() + b"\0" + per_file[rel].encode() + b"\n")
    return per_file, h.hexdigest()


def artifact_from_file(path: Path) -> Artifact:
    """A single-file artifact (a prompt or skill ``.md``); a ``SKILL.md`` means its whole folder."""
    if path.name == "SKILL.md":
        return artifact_from_dir(path.parent)
    data = path.read_bytes()
    per_file, digest = hash_files({path.name: data})
    return Artifact(kind="file", text=data.decode("utf-8", errors="replace"), path=path, files=per_file, hash=digest)


def artifact_from_dir(root: Path) -> Artifact:
    """A directory skill: ``SKILL.md`` plus every file beside and below it."""
    skill_md = root / "SKILL.md"
    if not skill_md.is_file():
        raise InputError(f"{root}: not a skill directory (no SKILL.md); add SKILL.md or name a .md file")
    inside = root.resolve()
    for p in [skill_md, *(p for p in root.rglob("*") if p.is_symlink())]:
        target = p.resolve()
        if not target.is_relative_to(inside):
            raise InputError(
                f"{p}: a symlink to {target}, outside the skill folder {root}; "
                "copy the file into the skill folder instead"
            )
    contents = {p.relative_to(root).as_posix(): p.read_bytes() for p in _iter_files(root)}
    per_file, digest = hash_files(contents)
    return Artifact(
        kind="skill_dir",
        text=skill_md.read_text(encoding="utf-8", errors="replace"),
        path=skill_md,
        root=root,
        files=per_file,
        hash=digest,
    )


def available_variants(skill_dir: Path) -> list[str]:
    """Names that ``<name>`` expressions can resolve in ``skill_dir``."""
    if not skill_dir.is_dir():
        return []
    names = {p.stem for p in skill_dir.glob("*.md") if p.is_file()}  # (not a named pipe or a broken link)
    names |= {p.parent.name for p in skill_dir.glob("*/SKILL.md") if p.is_file()}
    return sorted(names)


def _git(base_dir: Path, *args: str) -> bytes:
    try:
        proc = subprocess.run(["git", *args], cwd=base_dir, capture_output=True, check=False)
    except FileNotFoundError:
        raise InputError("git is not installed; git:<ref>:<name> variants need git") from None
    if proc.returncode != 0:
        raise InputError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def _resolve_git(expr: str, skill_dir: Path, base_dir: Path, cache_dir: Path) -> tuple[str, Artifact]:
    parts = expr.split(":", 2)
    if len(parts) != 3 or not parts[1] or not parts[2]:
        raise InputError(f"variant {expr!r}: expected git:<ref>:<name>, e.g. git:HEAD~1:my-skill")
    _, ref, name = parts
    top = Path(_git(base_dir, "rev-parse", "--show-toplevel").decode().strip())
    commit = _git(base_dir, "rev-parse", "--verify", f"{ref}^{{commit}}").decode().strip()
    rel_skill_dir = (base_dir / skill_dir).resolve().relative_to(top.resolve()).as_posix()
    listing = _git(top, "ls-tree", "-r", "--name-only", commit, "--", rel_skill_dir).decode().splitlines()
    single = f"{rel_skill_dir}/{name}.md"
    prefix = f"{rel_skill_dir}/{name}/"
    members = [p for p in listing if p.startswith(prefix)]
    target = cache_dir / "git" / commit[:12] / name
    if f"{prefix}SKILL.md" in members:
        for member in members:
            dest = target / member[len(prefix) :]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(_git(top, "show", f"{commit}:{member}"))
        return f"{name}@{ref}", artifact_from_dir(target)
    if single in listing:
        target.mkdir(parents=True, exist_ok=True)
        dest = target / f"{name}.md"
        dest.write_bytes(_git(top, "show", f"{commit}:{single}"))
        return f"{name}@{ref}", artifact_from_file(dest)
    found = sorted({p[len(rel_skill_dir) + 1 :].split("/")[0].removesuffix(".md") for p in listing})
    raise InputError(
        f"variant {expr!r}: no {name}.md or {name}/SKILL.md in {rel_skill_dir} at {ref}; "
        f"available there: {', '.join(found) or 'none'}"
    )


#: the longest variant expression (a path) taken; the longest path the OS takes is 4096 bytes
MAX_EXPRESSION_BYTES = 4096


def _check_length(expr: str) -> None:
    """``InputError`` for an expression no file system could hold (a path or name too long)."""
    size = len(expr.encode("utf-8", "surrogatepass"))
    longest = max((len(part.encode("utf-8", "surrogatepass")) for part in expr.split("/")), default=0)
    if size > MAX_EXPRESSION_BYTES or longest > 255:
        shown = expr[:40] + "…"
        raise InputError(
            f"variant {shown!r} ({size:,} bytes) is too long for a path or skill name (at most "
            f"{MAX_EXPRESSION_BYTES} bytes, 255 per name); name a file, a skill folder or baseline"
        )


def resolve_variant(
    expression: str,
    *,
    role: Role,
    skill_dir: Path,
    base_dir: Path,
    cache_dir: Path,
    name: str | None = None,
    cwd: Path | None = None,
) -> Variant:
    """Resolve one variant expression (see module docstring). ``base_dir`` is where relative
    paths are resolved (the config file's folder or the current directory)."""
    expr = expression.strip()
    _check_length(expr)
    if expr == "baseline":
        return Variant(name or "baseline", role, BASELINE, expr, cwd)
    if expr.startswith("git:"):
        auto_name, artifact = _resolve_git(expr, skill_dir, base_dir, cache_dir)
        return Variant(name or auto_name, role, artifact, expr, cwd)
    path = (base_dir / expr).resolve() if not Path(expr).is_absolute() else Path(expr)
    if path.is_file() and path.suffix.lower() == ".md":
        artifact = artifact_from_file(path)
        auto = path.parent.name if path.name == "SKILL.md" else path.stem
        return Variant(name or auto, role, artifact, expr, cwd)
    if path.is_dir() and (path / "SKILL.md").is_file():
        return Variant(name or path.name, role, artifact_from_dir(path), expr, cwd)
    sd = skill_dir if skill_dir.is_absolute() else base_dir / skill_dir
    if (sd / expr / "SKILL.md").is_file():
        return Variant(name or expr, role, artifact_from_dir(sd / expr), expr, cwd)
    if (sd / f"{expr}.md").is_file():
        return Variant(name or expr, role, artifact_from_file(sd / f"{expr}.md"), expr, cwd)
    known = available_variants(sd)
    listing = ", ".join(["baseline", *known])
    raise InputError(f"unknown variant {expr!r}: not a file and not in {sd}; available: {listing}")
