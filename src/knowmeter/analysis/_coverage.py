"""Knowledge-file coverage: which of a variant's knowledge files the agent actually took in.

A variant's knowledge files are its artifact tree (every file of a directory skill, or the single
``.md``), the files the artifact's text references (relative paths, markdown links, ``dir/``
mentions — kept only when they exist), everything under ``.claude/knowledge/``, the memory files
``CLAUDE.md`` / ``.claude/CLAUDE.md`` / ``AGENTS.md`` of its working directory, and any
``knowledge_dirs`` given.

A file counts as **accessed** when the agent printed its content — a successful ``Read``, a
``Grep`` in ``content`` mode given the file as its path, or a successful Bash ``cat`` / ``head``
/ ``tail`` / ``sed -n`` / ``awk`` / ``less`` / ``more`` / ``bat`` / ``nl`` / ``grep`` or ``rg
PATTERN FILE`` (not ``-l`` / ``-c``) with the file as an argument, or a ``python -c`` script
that ``open``s it (not redirected to a file; ``$PWD``, ``~`` and ``$HOME`` expanded, see
``_paths``) — when it invoked an installed skill (``Skill`` loads
``.claude/skills/<name>/SKILL.md``), or when the file was **injected** into the context (the
artifact delivered as system prompt, ``CLAUDE.md`` auto-loaded, Codex's ``# AGENTS.md
instructions`` message, Claude's ``Contents of …/CLAUDE.md`` reminder). A recursive grep hit, a
``Glob`` or a listing that merely names the file is not an access: the agent saw a name, not
the knowledge.

Matching is by exact key (see ``_paths``): the path relative to the workspace root, so a run in
a temporary copy matches the original, and ``a/notes.md`` is never matched by ``b/notes.md``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from knowmeter import defaults
from knowmeter._record import Count, Record
from knowmeter.analysis._commands import command_text, grep_hits, looks_like_file, parse_command
from knowmeter.analysis._dirs import walk_knowledge_dir
from knowmeter.analysis._paths import PathKeyer
from knowmeter.traces import MessageEvent, ToolStatus, Trace
from knowmeter.watermark import Watermark

Origin = Literal["artifact", "referenced", "knowledge_dir", "claude_knowledge", "memory"]
MEMORY_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md")
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_PATH_TOKEN = re.compile(
    r"(?<![\w/.:@-])((?:\.{1,2}/)?(?:[\w.-]+/)+(?:[\w-][\w.-]*\.[A-Za-z0-9]{1,8})?"
    r"|[\w-][\w.-]*\.(?:md|markdown|txt|rst|json|ya?ml|csv|toml|sh|py))(?![\w/-])"
)
_AGENTS_HEADER = re.compile(r"#\s*AGENTS\.md instructions for (\S+)")
_CONTENTS_OF = re.compile(r"Contents of (\S+?(?:CLAUDE|AGENTS)\.md)\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class KnowledgeFile(Record):
    """One knowledge file: its key (see ``_paths``), why it is one, other keys it can be
    reached under (another path to the same file, its installed copy ``.claude/skills/<name>/…``),
    and whether it is in every task's context by configuration (``injected``)."""

    path: str
    origin: Origin
    aliases: tuple[str, ...] = ()
    injected: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FileCoverage(Record):
    """Access counts of one knowledge file: ``accesses`` (reads, and injections a trace shows,
    over all tasks), ``tasks`` (tasks that accessed or were given it), ``injected`` (delivered
    in every task's context by configuration)."""

    path: str
    origin: Origin
    accesses: Count
    tasks: Count
    injected: bool = False

    @property
    def accessed(self) -> bool:
        return self.accesses > 0 or self.injected


@dataclass(frozen=True, slots=True, kw_only=True)
class Coverage(Record):
    """One variant's knowledge coverage, bound to the sample-set watermark (required)."""

    watermark: Watermark
    variant: str | None = None
    total: Count
    covered: Count
    rate: float | None = None  # None: no knowledge files (left out of the JSON form, so optional on read)
    uncovered: tuple[str, ...]
    files: tuple[FileCoverage, ...]

    def headline(self) -> str:
        if self.rate is None:
            return "coverage n/a (no knowledge files)"
        return f"coverage {self.rate:.1%} ({self.covered}/{self.total} knowledge files)"

    def lines(self) -> list[str]:
        """The headline followed by the watermark lines."""
        return [self.headline(), *self.watermark.lines()]


def _walk(directory: Path) -> list[Path]:
    """Regular files under ``directory`` (hidden names and cache folders skipped), sorted."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in defaults.IGNORED_DIRS)
        out.extend(Path(dirpath, f) for f in sorted(filenames) if not f.startswith("."))
    return out


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _references(text: str, bases: Sequence[Path], root: Path) -> list[Path]:
    """Existing files a text points at (a referenced directory contributes its files)."""
    found: list[Path] = []
    raw = [m.group(1).split("#", 1)[0] for m in _LINK.finditer(text)]
    raw += [m.group(1) for m in _PATH_TOKEN.finditer(text)]
    for ref in dict.fromkeys(r for r in raw if r and not re.match(r"^[a-z][a-z0-9+.-]*:", r, re.I)):
        if ref.startswith("/"):
            continue
        for base in bases:
            candidate = base / ref
            if candidate.is_file() and _inside(candidate, root):
                found.append(candidate)
                break
            if ref.endswith("/") and candidate.is_dir() and _inside(candidate, root):
                found.extend(_walk(candidate))
                break
    return found


@dataclass(frozen=True, slots=True)
class _Found:
    path: Path
    origin: Origin
    aliases: tuple[str, ...] = ()
    in_context: bool = False


def _main_artifact_file(art: Path, art_dir: Path | None) -> Path:
    return art_dir / "SKILL.md" if art_dir is not None else art


def knowledge_files(
    root: Path | str,
    *,
    artifact: Path | str | None = None,
    knowledge_dirs: Iterable[Path | str] = (),
    skill_name: str | None = None,
    artifact_in_context: bool = False,
    memory_in_context: bool = False,
) -> list[KnowledgeFile]:
    """A variant's knowledge files, keyed relative to its working directory ``root``.

    ``artifact`` is the variant's ``.md`` file, its ``SKILL.md`` (the whole directory is the
    artifact) or the skill directory; ``skill_name`` adds the installed-copy alias
    ``.claude/skills/<skill_name>/<file>`` for every artifact file. ``knowledge_dirs`` are
    relative to ``root`` or absolute. ``artifact_in_context`` marks the artifact's main file
    (the ``.md`` / ``SKILL.md``) as injected — it was the system prompt; ``memory_in_context``
    marks ``CLAUDE.md`` / ``AGENTS.md`` as injected — the agent auto-loads them. A file outside
    ``root`` is keyed ``../…`` relative to it, with its absolute path as an alias."""
    root = Path(root)
    found: list[_Found] = []
    if artifact is not None:
        art = Path(artifact)
        art_dir = art if art.is_dir() else art.parent if art.name == "SKILL.md" else None
        art_files = _walk(art_dir) if art_dir is not None else [art] if art.is_file() else []
        main = _main_artifact_file(art, art_dir)
        for f in art_files:
            alias: tuple[str, ...] = ()
            if skill_name:
                rel = f.relative_to(art_dir).as_posix() if art_dir is not None else "SKILL.md"
                alias = (f".claude/skills/{skill_name}/{rel}",)
            found.append(_Found(f, "artifact", alias, artifact_in_context and f == main))
        bases = [art_dir or art.parent, root]
        for f in art_files:
            try:
                text = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            found.extend(_Found(r, "referenced") for r in _references(text, bases, root))
    for d in knowledge_dirs:
        d_path = Path(d) if Path(d).is_absolute() else root / d
        found.extend(_Found(f, "knowledge_dir") for f in walk_knowledge_dir(d_path))
    found.extend(_Found(f, "claude_knowledge") for f in _walk(root / ".claude" / "knowledge"))
    found.extend(_Found(root / m, "memory", (), memory_in_context) for m in MEMORY_FILES if (root / m).is_file())
    return _dedupe(found, root)


def _dedupe(found: list[_Found], root: Path) -> list[KnowledgeFile]:
    """One entry per real file: the first origin wins, other paths to it become aliases."""
    keyer = PathKeyer(root)
    by_real: dict[str, tuple[str, Origin, list[str], bool]] = {}
    for f in found:
        key = keyer.key(str(f.path.absolute()))
        keys = [key] if not key.startswith("/") else [os.path.relpath(key, root.absolute()), key]
        real = str(f.path.resolve())
        if real not in by_real:
            by_real[real] = (keys[0], f.origin, [*keys[1:], *f.aliases], f.in_context)
            continue
        first_key, origin, aliases, in_context = by_real[real]
        aliases.extend(a for a in (*keys, *f.aliases) if a != first_key and a not in aliases)
        by_real[real] = (first_key, origin, aliases, in_context or f.in_context)
    return sorted(
        (KnowledgeFile(path=k, origin=o, aliases=tuple(a), injected=i) for k, o, a, i in by_real.values()),
        key=lambda f: f.path,
    )


def injected_files(trace: Trace, workspace_root: Path | str | None, *, cwd: str | None = None) -> set[str]:
    """Keys of memory files the harness put into the context, as its injected messages show."""
    keyer = PathKeyer(workspace_root, cwd or _trace_cwd(trace))
    out: set[str] = set()
    for e in trace.events:
        if not (isinstance(e, MessageEvent) and e.injected):
            continue
        out.update(keyer.key(m.group(1).rstrip("/") + "/AGENTS.md") for m in _AGENTS_HEADER.finditer(e.text))
        out.update(keyer.key(m.group(1)) for m in _CONTENTS_OF.finditer(e.text))
    return out


def _trace_cwd(trace: Trace) -> str | None:
    cwd = trace.meta.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def accessed_files(
    trace: Trace,
    workspace_root: Path | str | None,
    *,
    cwd: str | None = None,
    prefixes: Mapping[str, str] | None = None,
) -> dict[str, int]:
    """Access counts by file key for one task: successful Read calls, Bash reads and Skill
    invocations (see module docstring), plus 1 for each memory file the trace shows injected.
    ``prefixes``: other sandbox folders and the keys they stand for (see ``PathKeyer``)."""
    keyer = PathKeyer(workspace_root, cwd or _trace_cwd(trace), prefixes)
    counts: dict[str, int] = {}
    for inv in trace.invocations():
        if inv.result is None or inv.result.status != ToolStatus.SUCCESS:
            continue
        paths: list[str] = []
        inp = inv.call.input
        if inv.call.tool == "Read":
            p = inp.get("file_path", inp.get("path", inp.get("absolute_path")))
            paths = [str(p)] if p else []
        elif inv.call.tool == "Grep" and inp.get("output_mode") == "content" and inv.result.output.strip():
            # matching lines of the files it searched (the default mode shows file names only):
            # each line names its file, or there is one file, the path it was given
            p = inp.get("path")
            paths = grep_hits(inv.result.output) or ([str(p)] if p and looks_like_file(str(p)) else [])
        elif inv.call.tool == "Bash" and inv.result.exit_code in (None, 0) and inv.result.output.strip():
            cmd = parse_command(command_text(inv.call.input))
            # ``cat f || echo missing`` printing only "missing" read nothing
            if not cmd.only_fallback(inv.result.output):
                paths = cmd.read_paths() + (grep_hits(inv.result.output) if cmd.shows_matches else [])
        keys = [keyer.key(p, inv.call.cwd) for p in paths]
        if inv.call.tool == "Skill" and inv.call.input.get("skill"):
            # invoking an installed skill loads its SKILL.md into the context
            keys.append(f".claude/skills/{str(inv.call.input['skill']).rsplit(':', 1)[-1]}/SKILL.md")
        for k in keys:
            counts[k] = counts.get(k, 0) + 1
    for k in injected_files(trace, workspace_root, cwd=cwd):
        counts[k] = counts.get(k, 0) + 1
    return counts


def coverage(
    files: Sequence[KnowledgeFile],
    accesses: Iterable[Mapping[str, int]],
    watermark: Watermark,
    *,
    variant: str | None = None,
    injected: Iterable[str] = (),
) -> Coverage:
    """Coverage of ``files`` by the per-task access counts ``accesses`` (one mapping per
    executed task, from ``accessed_files``). Files marked ``injected`` by ``knowledge_files``, and
    the keys in ``injected``, were in every task's context and count as accessed."""
    per_task = [dict(a) for a in accesses]
    given = set(injected)
    rows: list[FileCoverage] = []
    for f in files:
        keys = (f.path, *f.aliases)
        count = sum(a.get(k, 0) for a in per_task for k in keys)
        tasks = sum(1 for a in per_task if any(a.get(k, 0) for k in keys))
        is_injected = f.injected or any(k in given for k in keys)
        rows.append(
            FileCoverage(
                path=f.path,
                origin=f.origin,
                accesses=count,
                injected=is_injected,
                tasks=len(per_task) if is_injected else tasks,
            )
        )
    covered = sum(1 for r in rows if r.accessed)
    return Coverage(
        watermark=watermark,
        variant=variant,
        total=len(rows),
        covered=covered,
        rate=covered / len(rows) if rows else None,
        uncovered=tuple(r.path for r in rows if not r.accessed),
        files=tuple(rows),
    )
