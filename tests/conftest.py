"""Shared pytest fixtures."""

from __future__ import annotations

import ast
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]

if sys.version_info < (3, 11, 8):
    # CPython before 3.11.8 keeps the AST constructor's recursion depth in global state
    # (gh-106905): two threads in ast.parse at once end in "SystemError: AST constructor
    # recursion depth mismatch". In a test session that happens when a server thread (the
    # scripted model server, the viewer) formats a traceback — 3.11's traceback module calls
    # ast.parse to place its carets — while pytest rewrites or formats in the main thread.
    # Serialising ast.parse removes the race; nothing else about parsing changes.
    _ast_parse = ast.parse
    _ast_lock = threading.RLock()

    def _serialised_parse(*args: Any, **kwargs: Any) -> Any:
        with _ast_lock:
            return _ast_parse(*args, **kwargs)

    ast.parse = _serialised_parse


#: report.json files a test wrote itself (to damage or edit one): not knowmeter's, not checked.
_EDITED_REPORTS: set[str] = set()


def _note_report_edits(event: str, args: tuple[Any, ...]) -> None:
    """knowmeter writes report.json as a temporary file renamed into place; any other opening
    of a report.json for writing (in this process) is a test editing it."""
    if event != "open" or not isinstance(args[0], str | os.PathLike) or not os.fspath(args[0]).endswith("report.json"):
        return
    mode, flags = args[1], args[2]
    if (mode and any(c in mode for c in "wax+")) or (flags & (os.O_WRONLY | os.O_RDWR)):
        _EDITED_REPORTS.add(os.path.realpath(args[0]))


sys.addaudithook(_note_report_edits)


@pytest.fixture(scope="session", autouse=True)
def _every_report_matches_the_schema(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """After the session: every report.json a test made knowmeter write (in this process or a
    subprocess) validates against the shipped report.schema.json."""
    yield
    import jsonschema

    from knowmeter.report._schema import SCHEMA_FILE

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    wrong = []
    for path in tmp_path_factory.getbasetemp().rglob("report.json"):
        try:
            if os.path.realpath(path) in _EDITED_REPORTS:
                continue
            report = json.loads(path.read_bytes())
        except FileNotFoundError:  # another pytest session cleaning up old base directories
            continue
        error = jsonschema.exceptions.best_match(validator.iter_errors(report))
        if error is not None:
            wrong.append(f"{path}: {'.'.join(map(str, error.absolute_path))}: {error.message[:200]}")
    assert not wrong, "reports that do not match report.schema.json:\n" + "\n".join(wrong)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``shared/`` folder that lies beside the repository (reference traces, specs)."""
    path = (REPO.parent / "shared").resolve()
    if not (path / "reference").is_dir():
        pytest.skip("shared/ reference material is not beside the repository")
    return path


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline demo project, made once per session with ``knowmeter init --demo``."""
    from tests.support.cli import init_demo

    return init_demo(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture(scope="session")
def demo_report(demo: Path) -> dict:  # type: ignore[type-arg]
    """The demo run's report.json content (``knowmeter.evaluate`` returns the typed ``Report``)."""
    import knowmeter

    return knowmeter.evaluate(demo).to_dict()
