"""Path helpers of the search analysis: the string forms agree with ``pathlib`` on any path."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from knowmeter.analysis import accessed_files, analyze_task
from knowmeter.analysis._paths import (
    PathKeyer,
    _name,
    _root_forms,
    is_component_prefix,
    literal_prefix,
    posix_parts,
    same_file_name,
)
from knowmeter.traces import MessageEvent, Trace

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


def test_a_trace_that_names_no_path_keys_none(tmp_path: Path) -> None:
    """A one-message answer's analysis (gaps and file access) works out no workspace layout: the
    layout (roots resolved on disk, home, prefixes) is worked out on the first path keyed."""
    trace = Trace([MessageEvent("assistant", "The answer is 4.")], meta={"cwd": str(tmp_path)})
    before = _root_forms.cache_info().misses
    gaps = analyze_task(trace, sample_id="s", prompt_text="2+2?", workspace_root=tmp_path / "ws")
    access = accessed_files(trace, tmp_path / "ws2", prefixes={str(tmp_path / "home"): ".claude"})
    assert gaps.signals == () and access == {}
    assert _root_forms.cache_info().misses == before
    keyer = PathKeyer(tmp_path / "ws3", prefixes={str(tmp_path / "home"): ".claude"})
    assert keyer.key(str(tmp_path / "ws3" / "a.md")) == "a.md"
    assert keyer.key(str(tmp_path / "home" / "x.md")) == ".claude/x.md"
    assert _root_forms.cache_info().misses == before + 1
