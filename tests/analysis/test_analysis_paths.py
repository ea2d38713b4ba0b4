"""Path helpers of the search analysis: the string forms agree with ``pathlib`` on any path."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from knowmeter.analysis._paths import _name, is_component_prefix, literal_prefix, posix_parts, same_file_name

# paths built from the pieces that make POSIX parsing tricky: repeated and leading slashes, dot
# components, glob characters
_PIECES = st.sampled_from(["", "/", "//", "///", ".", "..", "a", "b.md", "*.py", "**", "x?", "[ab]", "{c,d}", " "])
_PATHS = st.lists(_PIECES, max_size=7).map("".join)


def _pathlib_literal_prefix(path: str) -> str:
    parts: list[str] = []
    for part in PurePosixPath(path).parts:
        if any(c in "*?[{" for c in part):
            break
        parts.append(part)
    return str(PurePosixPath(*parts)) if parts else ""


@given(_PATHS)
def test_posix_parts_and_literal_prefix_match_pathlib(path: str) -> None:
    assert posix_parts(path) == list(PurePosixPath(path).parts)
    assert literal_prefix(path) == _pathlib_literal_prefix(path)


@given(_PATHS, _PATHS)
def test_component_prefix_and_file_name_match_pathlib(a: str, b: str) -> None:
    pa, pb = PurePosixPath(a).parts, PurePosixPath(b).parts
    expected = a == b or (a not in ("", ".", "/") and len(pa) < len(pb) and pb[: len(pa)] == pa)
    assert is_component_prefix(a, b) == expected
    assert _name(a) == PurePosixPath(a).name


def test_examples() -> None:
    assert literal_prefix("/repo/docs/**/*.md") == "/repo/docs"
    assert literal_prefix("//net/share/*.txt") == "//net/share"
    assert literal_prefix("**/*.py") == ""
    assert is_component_prefix("docs", "docs/a.md") and not is_component_prefix("docs", "docs2/a.md")
    assert same_file_name("/a/session_live.ex", "lib/*session_live.ex")
