"""``custom`` assertions: a user's Python function, run in a child process with a timeout.

``fn: path/to/file.py:function`` (path relative to the sample file's directory). The function is
called as ``function(output, sample, trace)`` — the answer text, the sample and the trace as
plain dicts — and returns a bool or ``{"pass": bool, "reason": str}`` (``passed`` / ``message``
are accepted too). It runs in its own process (and process group) with the sample file's
directory as working directory, so a crash, a hang (killed after ``timeout`` seconds, default
``GradingConfig.custom_timeout_s``) or a bad return value fails this assertion only. Scores in
the fact layer unless ``layer: behavior``.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import json
import logging
import os
import signal
import sys
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process
from pydantic import Field, PrivateAttr, ValidationInfo, model_validator

from knowmeter.grading._checks_text import clip
from knowmeter.grading._layers import Layer
from knowmeter.grading._registry import Assertion, CheckContext, LoadContext, Outcome, register

_RUNNER = Path(__file__).with_name("_custom_runner.py")
_MAX_CAPTURE = 1 << 20

log = logging.getLogger("knowmeter")


async def _drain(stream: ByteReceiveStream | None, buf: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        if len(buf) < _MAX_CAPTURE:
            buf.extend(chunk[: _MAX_CAPTURE - len(buf)])


async def _feed(proc: Process, payload: bytes) -> None:
    if proc.stdin is None:
        return
    try:
        await proc.stdin.send(payload)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the child exited without reading: its exit code tells why
    finally:
        await proc.stdin.aclose()


def _kill_group(proc: Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        elif proc.returncode is None:
            proc.kill()


async def run_child(argv: list[str], payload: bytes, cwd: Path, timeout_s: float) -> tuple[int | None, str, str]:
    """Run ``argv`` with ``payload`` on stdin; (exit code or None on timeout, stdout, stderr).
    The child's whole process group is killed on timeout and once it has finished."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    proc = await anyio.open_process(
        argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, cwd=cwd, env=env, start_new_session=True
    )
    out, err = bytearray(), bytearray()
    try:
        with anyio.move_on_after(timeout_s) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain, proc.stdout, out)
                tg.start_soon(_drain, proc.stderr, err)
                tg.start_soon(_feed, proc, payload)
                await proc.wait()
    finally:
        _kill_group(proc)
        with anyio.CancelScope(shield=True):
            await proc.wait()
            await proc.aclose()
    code = None if scope.cancelled_caught else proc.returncode
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _defined_names(path: Path) -> list[str]:
    """The names a Python file defines (functions, classes, assignments, imports — inside
    ``if`` / ``try`` blocks too), read without running it; a file that cannot be parsed is named
    in the error."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        raise ValueError(f"custom assertion file {path} cannot be read as Python: {exc}") from None
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, ast.alias):
            names.append((node.asname or node.name).split(".")[0])
    return sorted(set(names))


def _interpret(value: Any) -> tuple[bool, str, dict[str, Any] | None]:
    if isinstance(value, bool):
        return value, f"custom check {'passed' if value else 'failed'}", None
    if isinstance(value, dict):
        ok = value.get("pass", value.get("passed"))
        if isinstance(ok, bool):
            reason = value.get("reason", value.get("message"))
            extra = {k: v for k, v in value.items() if k not in ("pass", "passed", "reason", "message")}
            message = str(reason) if reason else f"custom check {'passed' if ok else 'failed'}"
            return ok, message, extra or None
    return False, f"custom function returned {clip(repr(value))}; expected a bool or {{pass, reason}}", None


@register("custom")
class Custom(Assertion):
    fn: str = Field(min_length=3)
    timeout: float | None = Field(default=None, gt=0)
    layer_override: Layer | None = Field(default=None, alias="layer")

    _path: Path = PrivateAttr()
    _function: str = PrivateAttr()
    _cwd: Path = PrivateAttr()

    @model_validator(mode="after")
    def _resolve(self, info: ValidationInfo) -> Custom:
        load = info.context if isinstance(info.context, LoadContext) else None
        base = load.base_dir if load else Path.cwd()
        file_part, sep, function = self.fn.rpartition(":")
        if not sep or not file_part or not function.isidentifier():
            raise ValueError(f"fn must be 'path/to/file.py:function', got {self.fn!r}")
        path = (base / file_part).resolve()
        if not path.is_file():
            raise ValueError(f"custom assertion file not found: {path}")
        if not path.is_relative_to(base.resolve()):
            log.warning(
                "knowmeter: warning: custom assertion fn: %s is outside the project (%s); it runs as "
                "Python code on this machine — check it is yours",
                path,
                base.resolve(),
            )
        defined = _defined_names(path)
        if function not in defined:
            close = difflib.get_close_matches(function, defined, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ValueError(
                f"{path} defines no function {function!r}; {hint}names defined there: {', '.join(defined) or 'none'}"
            )
        self._path, self._function, self._cwd = path, function, base
        return self

    @property
    def layer(self) -> Layer:
        return self.layer_override or super().layer

    async def evaluate(self, ctx: CheckContext) -> Outcome:
        timeout = self.timeout or ctx.config.custom_timeout_s
        payload = json.dumps(
            {
                "path": str(self._path),
                "function": self._function,
                "output": ctx.output,
                "sample": ctx.sample.to_record(),
                "trace": ctx.result.trace.to_dict(),
            },
            ensure_ascii=False,
        ).encode()
        argv = [ctx.config.custom_python or sys.executable, str(_RUNNER)]
        try:
            code, out, err = await run_child(argv, payload, self._cwd, timeout)
        except OSError as exc:
            return Outcome(False, f"custom assertion could not start: {exc}")
        if code is None:
            return Outcome(False, f"custom assertion timed out after {timeout:g}s (killed)")
        if code != 0:
            last = next((line for line in reversed(err.strip().splitlines()) if line.strip()), "no message")
            return Outcome(False, f"custom assertion crashed (exit {code}): {last[:300]}")
        try:
            value = json.loads(out)["result"]
        except (json.JSONDecodeError, KeyError, TypeError):
            return Outcome(False, f"custom assertion wrote no result: {clip(out)}")
        ok, message, details = _interpret(value)
        return Outcome(ok, message, details)
