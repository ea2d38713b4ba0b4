"""The report template is compiled once per machine: a later run loads Jinja's cached bytecode,
and a cache that cannot be read or written never stops a page from being rendered."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from jinja2 import Environment, FileSystemBytecodeCache

from knowmeter.report.html import _page


@pytest.fixture
def fresh_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """``environment()`` built anew, its bytecode cache in ``tmp_path / "cache"``."""
    directory = tmp_path / "cache"
    directory.mkdir()
    monkeypatch.setattr(_page, "_template_cache", lambda: _page._TemplateCache(str(directory)))
    _page.environment.cache_clear()
    yield directory
    _page.environment.cache_clear()


def test_a_second_process_loads_the_compiled_template(fresh_environment: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _page.environment().get_template("report.html.j2")
    assert list(fresh_environment.iterdir()), "the compiled template was not stored"

    _page.environment.cache_clear()  # as a new process would start

    def no_compiling(*args: object, **kwargs: object) -> None:
        raise AssertionError("the template was compiled again")

    monkeypatch.setattr(Environment, "compile", no_compiling)
    template = _page.environment().get_template("report.html.j2")  # loaded from the cache
    assert template.name == "report.html.j2"


def test_a_cache_that_cannot_be_written_is_skipped(fresh_environment: Path) -> None:
    shutil.rmtree(fresh_environment)  # writing the compiled template fails
    template = _page.environment().get_template("report.html.j2")
    assert template.name == "report.html.j2"


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_damaged_cache_file_is_compiled_again(fresh_environment: Path, damage: str) -> None:
    _page.environment().get_template("report.html.j2")
    (cached,) = fresh_environment.iterdir()
    data = cached.read_bytes()
    cached.write_bytes(data[: len(data) // 2] if damage == "truncated" else data[:40] + b"\x00garbage" * 10)
    _page.environment.cache_clear()  # as a new process would start
    assert _page.environment().get_template("report.html.j2").name == "report.html.j2"
    assert cached.read_bytes() == data  # the damaged file was replaced by the compiled template


def test_no_private_temporary_directory_means_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    def unsafe(self: object) -> str:
        raise RuntimeError("Cannot determine safe temp directory.")

    monkeypatch.setattr(_page._TemplateCache, "_get_default_cache_dir", unsafe)
    assert _page._template_cache() is None


def test_code_compiled_under_other_settings_is_compiled_again(fresh_environment: Path) -> None:
    """A cache written before the environment showed bidi controls (no ``finalize``) is not
    reused: its compiled code would print them raw."""
    older = Environment(
        loader=_page.environment().loader, bytecode_cache=FileSystemBytecodeCache(str(fresh_environment))
    )
    assert older.get_template("viewer_error.html.j2").render(css="", csp="", title="t", status=404, message="a\u202eb")
    _page.environment.cache_clear()  # as a new process of a newer version would start
    page = (
        _page.environment()
        .get_template("viewer_error.html.j2")
        .render(css="", csp="", title="t", status=404, message="a\u202eb")
    )
    assert "a\u27e8U+202E\u27e9b" in page and "\u202e" not in page
