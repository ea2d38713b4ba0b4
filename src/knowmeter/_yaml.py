"""User files → data, with every problem as one line naming the file (and the line and column
when known): YAML and JSON syntax, non-UTF-8 text, a folder or unreadable path, YAML tags whose
value does not fit (``!!int x``), alias bombs, and nesting too deep to handle.
PyYAML is imported on first use (runs from JSON / JSONL files never load it)."""

from __future__ import annotations

import codecs
import json
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from knowmeter.errors import InputError
from knowmeter.jsonio import without_lone_surrogates

#: Deepest nesting of lists / mappings a user file may have.
MAX_DEPTH = 100
#: Most values a YAML file may expand to once its aliases are followed (an alias bomb's defence).
MAX_EXPANDED = 5_000_000


def read_user_text(path: Path, what: str, fix: str = "") -> str:
    """The UTF-8 text of ``path``; a missing file, a folder, an unreadable file or non-UTF-8
    bytes raise ``InputError`` naming ``path`` (``what``: e.g. "sample file"; ``fix``: what to do
    when it is missing)."""
    try:
        return path.read_text(encoding="utf-8-sig")  # a byte-order mark in front is not part of the text
    except (OSError, UnicodeDecodeError) as exc:
        raise _read_error(exc, path, what, fix) from None


def read_user_lines(path: Path, what: str, fix: str = "") -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of ``path``'s UTF-8 text, read one line at a time and numbered
    as ``str.splitlines`` numbers them; problems raise ``InputError`` as ``read_user_text``'s do."""
    lineno = offset = 0  # offset: of the line in the text after a byte-order mark, as read_user_text counts
    try:
        with path.open("rb") as fh:
            for raw in fh:  # split at b"\n" only: no UTF-8 character holds that byte
                if offset == 0 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    exc.start += offset
                    raise
                offset += len(raw)
                for line in text.splitlines():  # \r, \x0c, \u2028… end lines too, as in the whole text
                    lineno += 1
                    yield lineno, line
    except (OSError, UnicodeDecodeError) as exc:
        raise _read_error(exc, path, what, fix) from None


def _read_error(exc: OSError | UnicodeDecodeError, path: Path, what: str, fix: str) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{path}: {what} not found{'; ' + fix if fix else ''}")
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{path}: is a folder, not a {what}; name the file inside it")
    if isinstance(exc, UnicodeDecodeError):
        return InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8")
    return InputError(f"{path}: cannot read the {what} ({exc.strerror or exc})")


def check_shape(data: Any, path: Path | str, *, max_depth: int = MAX_DEPTH, max_values: int | None = None) -> None:
    """Raise ``InputError`` when ``data`` nests deeper than ``max_depth`` or (shared values
    counted each time they are reached, as a YAML alias is) holds more than ``max_values``."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, int, bool]] = [(data, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if depth > max_depth:
            raise InputError(f"{path}: nested deeper than {max_depth} levels; flatten the data")
        children = list(node.values()) if isinstance(node, dict) else node
        if done:
            sizes[id(node)] = 1 + sum(sizes.get(id(c), 1) for c in children)
            if max_values is not None and sizes[id(node)] > max_values:
                raise InputError(
                    f"{path}: its aliases expand to more than {max_values:,} values (an alias bomb?); "
                    "write the data out instead of repeating aliases"
                )
            continue
        if id(node) in sizes:
            continue
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children if isinstance(c, dict | list) and id(c) not in sizes)


#: A surrogate code point (text read as UTF-8 holds none; a str made otherwise might)
_SURROGATE = re.compile("[\ud800-\udfff]")

#: ``[[[[…`` / ``{{{{…`` opening more levels than ``MAX_DEPTH`` in a row
_DEEP_FLOW = re.compile(rf"(?:[\[{{]\s*){{{MAX_DEPTH + 1}}}")


def parse_yaml(text: str, path: Path) -> Any:
    """``yaml.safe_load(text)``, checked by ``check_shape``; any problem raises ``InputError``
    naming ``path``."""
    import yaml

    if _DEEP_FLOW.search(text):  # refused before the (pure-Python, slow) parser walks it
        raise InputError(f"{path}: nested deeper than {MAX_DEPTH} levels; flatten the data")
    try:
        data = yaml.load(text, Loader=_loader())  # a SafeLoader that refuses duplicate keys
    except _DuplicateKey as exc:
        raise InputError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{path}: {where}invalid YAML ({problem}); fix the syntax at that line") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to read; flatten the data") from None
    except (ValueError, TypeError, OverflowError) as exc:  # a tag whose value does not fit: !!int x
        raise InputError(
            f"{path}: invalid YAML value ({str(exc).splitlines()[0][:200]}); remove the !!tag or fix its value"
        ) from None
    check_shape(data, path, max_values=MAX_EXPANDED)
    return without_lone_surrogates(data)  # a "\ud800" escape is no text (and not writable as UTF-8)


class _DuplicateKey(Exception):
    """A mapping names one key twice (the loaders would keep the last value without a word)."""

    def __init__(self, key: str, line: int | None = None, first: int | None = None) -> None:
        where = f"line {line}: duplicate key {key!r} (first on line {first})" if line else f"duplicate key {key!r}"
        super().__init__(f"{where} in one mapping; keep one of them")


@cache
def _loader() -> type:
    """PyYAML's SafeLoader, refusing a key given twice in one mapping (a key a ``<<`` merge
    brings in may still be overridden, as YAML means it)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: dict[tuple[str, str], int] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    key = (key_node.tag, key_node.value)
                    line = key_node.start_mark.line + 1
                    if key in seen:
                        raise _DuplicateKey(key_node.value, line, seen[key])
                    seen[key] = line
            return super().construct_mapping(node, deep=deep)

    return Loader


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; a key given twice raises ``_DuplicateKey``. Keys are
    interned: the records of a JSONL file, each parsed on its own, then share one copy of each."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[sys.intern(key)] = value
    return out


def parse_json(text: str | bytes, path: Path | str, where: str = "") -> Any:
    """``json.loads`` checked by ``check_shape``; any problem raises ``InputError`` naming
    ``path`` (and ``where``, e.g. "line 3", for one line of a JSONL file)."""
    at = f"{where}: " if where else ""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        raise InputError(f"{path}: {at}{exc}") from None
    except json.JSONDecodeError as exc:
        pos = "" if where else f"line {exc.lineno}, column {exc.colno}: "
        raise InputError(f"{path}: {at}{pos}invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise InputError(f"{path}: {at}nested too deeply to read; flatten the data") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: {at}not UTF-8 text ({exc.reason}); save it as UTF-8") from None
    except ValueError as exc:  # a number past Python's digit limit
        raise InputError(f"{path}: {at}cannot read a value ({str(exc).split(';')[0][:200]})") from None
    # each walk of the data only when its text could need it (a JSONL file's lines mostly cannot)
    if _brackets(text) > MAX_DEPTH:  # fewer cannot nest deeper
        check_shape(data, f"{path}: {where}" if where else path)
    return without_lone_surrogates(data) if _may_hold_surrogates(text) else data


def _brackets(text: str | bytes) -> int:
    """The ``[`` and ``{`` in ``text``: no more levels than that can nest in what it parses to."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def _may_hold_surrogates(text: str | bytes) -> bool:
    """Whether JSON parsed from ``text`` may hold a lone surrogate: only a ``\\u`` escape or the
    text itself can put one there (json.loads decodes bytes with surrogatepass)."""
    return isinstance(text, bytes) or "\\u" in text or _SURROGATE.search(text) is not None
