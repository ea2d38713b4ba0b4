"""Path keys: paths the agent used, normalised so they can be compared exactly.

A key is the POSIX path relative to the workspace root when the path lies inside it (so a run
in a temporary copy of the workspace matches the original layout), and the normalised absolute
path otherwise. Normalisation is lexical (``a/./b/../c`` → ``a/c``): the workspace may be gone
by the time a trace is analysed."""

from __future__ import annotations

import fnmatch
import functools
import os.path
import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import NamedTuple

_HOME_VAR = re.compile(r"^(?:~|\$HOME|\$\{HOME\})(?=/|$)")
_PWD_VAR = re.compile(r"^\$(?:PWD|\{PWD\})(?=/|$)")
# a home folder at the start of an absolute path: where ``~`` most likely points
_HOME_OF = re.compile(r"^(/home/[^/]+|/Users/[^/]+|/root)(?=/|$)")


class _Frame(NamedTuple):
    roots: tuple[str, ...]
    cwd: str | None
    home: str | None
    prefixes: tuple[tuple[str, str], ...]


class PathKeyer:
    """Turns the paths one task's agent used into keys relative to its workspace root.

    ``prefixes`` maps other absolute folders of the task's sandbox to the key prefix they stand
    for (an executor's installed skill ``<sandbox>/home/.claude/skills/x`` → ``.claude/skills/x``).
    ``$PWD/…`` is resolved against the call's cwd; ``~/…`` and ``$HOME/…`` against ``home``, by
    default the home folder the cwd or workspace lies in (``/home/<user>``, ``/Users/<user>``,
    ``/root``), else they stay as written."""

    def __init__(
        self,
        workspace_root: Path | str | None,
        cwd: str | None = None,
        prefixes: Mapping[str, str] | None = None,
        home: str | None = None,
    ) -> None:
        self._given = (workspace_root, cwd, prefixes, home)

    @functools.cached_property
    def _frame(self) -> _Frame:
        """The roots, cwd, home and prefixes paths are keyed against: worked out on the first
        ``key`` (most traces' tasks key no path: a one-message answer)."""
        workspace_root, cwd, prefixes, home = self._given
        roots = _root_forms(str(workspace_root)) if workspace_root is not None else ()
        base = _norm(cwd) if cwd else (roots[-1] if roots else None)
        guess = _HOME_OF.match(base or "") or _HOME_OF.match(roots[-1] if roots else "")
        mapped = sorted(
            ((_norm(k), v.strip("/")) for k, v in (prefixes or {}).items()), key=lambda kv: len(kv[0]), reverse=True
        )
        return _Frame(roots, base, home or (guess.group(1) if guess else None), tuple(mapped))

    def key(self, raw: str, cwd: str | None = None) -> str:
        """The key of ``raw``: relative paths resolve against ``cwd`` (where the call ran, when the
        trace says: ``ToolCallEvent.cwd``), else the agent's cwd."""
        frame = self._frame
        p = raw.strip().strip("'\"")
        if p.startswith("file://"):
            p = p[len("file://") :]
        p = _HOME_VAR.sub("~", p)
        if _PWD_VAR.match(p):
            p = _PWD_VAR.sub("", p).lstrip("/") or "."
        if p.startswith("~") and frame.prefixes:  # ``~/…``: only a prefix given in that form can place it
            mapped = self._mapped(_norm(p))
            if mapped is not None:
                return mapped
        if p == "~" or p.startswith("~/"):
            if not frame.home:
                return _norm(p)  # whose home is unknown: kept as written
            p = frame.home + p[1:]
        if not p.startswith("/"):
            base = _norm(cwd) if cwd else frame.cwd
            if base is None:
                return _norm(p)
            p = f"{base}/{p}"
        ap = _norm(p)
        mapped = self._mapped(ap)
        if mapped is not None:
            return mapped
        for root in frame.roots:
            if ap == root:
                return "."
            if ap.startswith(root.rstrip("/") + "/"):
                return ap[len(root.rstrip("/")) + 1 :]
        return ap

    def _mapped(self, path: str) -> str | None:
        for prefix, key in self._frame.prefixes:
            if path == prefix or path.startswith(prefix + "/"):
                return (key + path[len(prefix) :]) if key else path[len(prefix) + 1 :]
        return None


@functools.lru_cache(maxsize=256)
def _root_forms(workspace_root: str) -> tuple[str, ...]:
    """The workspace root as written and with links resolved, longest first. Cached: one run
    analyses thousands of tasks in the same few workspaces, and ``resolve`` costs system calls."""
    root = Path(workspace_root)
    roots = {_norm(str(root.absolute()))}
    if root.exists():
        roots.add(_norm(str(root.resolve())))
    return tuple(sorted(roots, key=len, reverse=True))


def _norm(p: str) -> str:
    out = os.path.normpath(p.replace("\\", "/"))
    return "/" + out.lstrip("/") if out.startswith("//") else out


_GLOB_CHARS = frozenset("*?[{")


def posix_parts(path: str) -> list[str]:
    """The parts of ``path`` as ``PurePosixPath`` gives them."""
    return list(PurePosixPath(path).parts)


def literal_prefix(path_key: str) -> str:
    """The path up to (not including) its first component with a glob character; ``""`` when
    the very first component is a glob (``**/*.py``)."""
    parts: list[str] = []
    for part in posix_parts(path_key):
        if not _GLOB_CHARS.isdisjoint(part):
            break
        parts.append(part)
    return str(PurePosixPath(*parts)) if parts else ""


def is_component_prefix(a: str, b: str) -> bool:
    """True when path ``a`` equals ``b`` or is one of its ancestor directories (component-wise,
    so ``docs`` is a prefix of ``docs/a.md`` but not of ``docs2/a.md``). The workspace root
    ``.`` and the filesystem root are nobody's prefix: they would make every path similar."""
    if a == b:
        return True
    if a in ("", ".", "/"):
        return False
    pa, pb = posix_parts(a), posix_parts(b)
    return len(pa) < len(pb) and pb[: len(pa)] == pa


def mentioned(raw: str, key: str, texts: Sequence[str]) -> bool:
    """True when a path appears in any of ``texts`` as the agent wrote it or as its key
    (paths shorter than 3 characters never count: ``.`` is in every prompt)."""
    forms = {raw.strip().strip("'\""), key}
    forms = {f for f in forms if len(f) >= 3}
    return any(f in t for f in forms for t in texts)


def _has_literal_stem(name: str) -> bool:
    literal = "".join(c for c in name if c not in _GLOB_CHARS and c not in "]}")
    stem = literal.rsplit(".", 1)[0] if "." in literal.lstrip(".") else literal
    return any(c.isalnum() for c in stem)


def _name(path: str) -> str:
    """``PurePosixPath(path).name``."""
    parts = posix_parts(path)
    return parts[-1] if parts and parts[-1] not in ("/", "//") else ""


def same_file_name(a: str, b: str) -> bool:
    """True when two paths name the same file, wherever they look for it: equal final names, or
    a glob final name (``*session_live.html.heex``) matching the other's name. A glob without a
    literal stem (``*.py``) names no particular file and matches nothing here."""
    na, nb = _name(a), _name(b)
    if not na or not nb:
        return False
    ga, gb = any(c in _GLOB_CHARS for c in na), any(c in _GLOB_CHARS for c in nb)
    if not ga and not gb:
        return na == nb
    if ga and gb:
        return na == nb and _has_literal_stem(na)
    glob, name = (na, nb) if ga else (nb, na)
    return _has_literal_stem(glob) and fnmatch.fnmatchcase(name, glob)
