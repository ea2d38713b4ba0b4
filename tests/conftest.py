"""Shared pytest fixtures."""

from __future__ import annotations

import ast
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


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``shared/`` folder that lies beside the repository (reference traces, specs)."""
    path = (REPO.parent / "shared").resolve()
    if not (path / "reference").is_dir():
        pytest.skip("shared/ reference material is not beside the repository")
    return path
