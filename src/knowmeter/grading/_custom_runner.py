"""Runs one ``custom`` assertion function in a child process (started by ``_checks_custom``).

Reads ``{"path", "function", "output", "sample", "trace"}`` as JSON on stdin, imports the file,
calls ``function(output, sample, trace)`` (awaiting it if it is a coroutine) with anything it
prints sent to stderr, and writes ``{"result": <return value>}`` as JSON to stdout. A crash exits
non-zero with the traceback on stderr. Standard library only, so the child starts fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import json
import sys
from pathlib import Path
from typing import Any


async def _wait(awaitable: Any) -> Any:
    return await awaitable


def main() -> int:
    payload = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    path = Path(payload["path"])
    stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(f"knowmeter_custom_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = getattr(module, payload["function"], None)
        if not callable(fn):
            raise AttributeError(f"{path.name} has no function {payload['function']!r}")
        result = fn(payload["output"], payload["sample"], payload["trace"])
        if inspect.isawaitable(result):
            result = asyncio.run(_wait(result))
    stdout.write(json.dumps({"result": result}, ensure_ascii=False, default=repr))
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
