"""The ``script`` executor: any command speaking omk's custom-executor protocol.

stdin: ``{"model", "system", "prompt"}``. stdout: JSON ``{output, inputTokens, outputTokens,
costUSD, durationApiMs, numTurns, turns?, toolCalls?, ok?, error?}``; stdout that is not JSON is
the output text. A non-zero exit is an error carrying stderr.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import signal
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from knowmeter import jsonio
from knowmeter._faults import WorkFolderLost
from knowmeter.executors._protocol import ExecRequest, ExecResult, Executor, ExecutorError
from knowmeter.executors._registry import ExecutorSpec, UnknownExecutor, register_executor, resolve_argv
from knowmeter.executors._spawn import MAX_STDOUT_BYTES, run_command
from knowmeter.traces import (
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolStatus,
    Trace,
    as_int,
    make_usage,
    normalise_tool_name,
)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _warn(warnings: list[dict[str, str]], key: str, message: str) -> None:
    warnings.append({"kind": f"reply_{key}", "message": f"the agent's reply has {message}"})


def _measure(reply: dict[str, Any], key: str, warnings: list[dict[str, str]]) -> float | None:
    """``reply[key]`` when it is a finite number >= 0; absent is unknown, and so is anything
    else (NaN, Infinity, negative, a string), which is named in ``warnings``."""
    v = reply.get(key)
    if v is None:
        return None
    if _is_number(v) and math.isfinite(v) and v >= 0:
        return float(v)
    _warn(warnings, key, f"{key} {jsonio.shown(v)}: it must be a finite number >= 0, so it is unknown")
    return None


def _count(reply: dict[str, Any], key: str, warnings: list[dict[str, str]]) -> int | None:
    """``reply[key]`` as a count (``_measure``'s rules)."""
    v = _measure(reply, key, warnings)
    return None if v is None else int(v)


def _cost(reply: dict[str, Any], warnings: list[dict[str, str]]) -> float | None:
    """``costUSD`` when it is a number (the runner refuses a NaN, infinite or negative one: a
    cost is never guessed); any other value is unknown and named in ``warnings``."""
    v = reply.get("costUSD")
    if v is None or _is_number(v):
        return v
    _warn(warnings, "costUSD", f"costUSD {jsonio.shown(v)}: a cost must be a number, so it is unknown")
    return None


def _output(reply: dict[str, Any], warnings: list[dict[str, str]]) -> str:
    """The reply's ``output`` as text (a non-string is its JSON); none at all is graded as an
    empty answer, named in ``warnings`` unless the reply is an error."""
    output = reply.get("output")
    if isinstance(output, str):
        return output
    if output is not None:
        return json.dumps(output, ensure_ascii=False)
    if not reply.get("error") and reply.get("ok") is not False:
        _warn(warnings, "output", 'no output: it was graded as an empty answer — print {"output": "…"}')
    return ""


def _tool_events(calls: list[Any], turn: int, prefix: str) -> list[ToolCallEvent | ToolResultEvent]:
    events: list[ToolCallEvent | ToolResultEvent] = []
    for i, raw in enumerate(calls):
        if not isinstance(raw, dict):
            continue
        name = str(raw.get("tool") or raw.get("name") or "unknown")
        call_id = str(raw.get("id") or f"{prefix}{i}")
        raw_input = raw.get("input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {"value": raw_input}
        events.append(ToolCallEvent(call_id, normalise_tool_name(name), tool_input, turn, source_tool=name))
        if any(k in raw for k in ("output", "success", "is_error", "status")):
            if raw.get("status") in {s.value for s in ToolStatus}:
                status = ToolStatus(raw["status"])
            elif raw.get("success") is False or raw.get("is_error") is True:
                status = ToolStatus.FAILURE
            elif raw.get("success") is True or raw.get("is_error") is False:
                status = ToolStatus.SUCCESS
            else:
                status = ToolStatus.UNKNOWN
            output = raw.get("output")
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            events.append(
                ToolResultEvent(
                    call_id,
                    text if output is not None else "",
                    status,
                    turn,
                    exit_code=as_int(raw.get("exitCode", raw.get("exit_code"))),
                )
            )
    return events


def trace_from_script_reply(reply: dict[str, Any], output: str) -> Trace:
    """Build a Trace from the protocol's optional ``turns`` / ``toolCalls`` fields."""
    trace = Trace(source="script")
    turns = reply.get("turns")
    if isinstance(turns, list) and turns:
        for n, turn in enumerate(turns, 1):
            if not isinstance(turn, dict):
                continue
            role = turn.get("role", "assistant")
            text = turn.get("content", turn.get("text", ""))
            if isinstance(text, str) and text:
                trace.events.append(MessageEvent("user" if role == "user" else "assistant", text, n))
            trace.events.extend(_tool_events(turn.get("toolCalls") or [], n, f"t{n}c"))
    else:
        trace.events.extend(_tool_events(reply.get("toolCalls") or [], 1, "c"))
    if output and not any(isinstance(e, MessageEvent) and e.role == "assistant" for e in trace.events):
        trace.events.append(MessageEvent("assistant", output, max(trace.turns, 1)))
    return trace


def parse_script_stdout(stdout: str) -> ExecResult:
    """Turn the command's stdout into an ExecResult (non-JSON stdout is the output text)."""
    text = stdout.strip()
    warning = None
    try:
        reply = jsonio.loads(text) if text.startswith("{") else None
    except ValueError as exc:
        reply = None
        warning = (
            f"the agent's stdout starts like a JSON reply but is not valid JSON ({exc}); it was graded as "
            'plain text — a script agent must print one JSON object {"output": …}'
        )
    if not isinstance(reply, dict):
        trace = Trace(source="script", events=[MessageEvent("assistant", stdout, 1)] if stdout else [])
        if warning:
            trace.meta["warnings"] = [{"kind": "broken_envelope", "message": warning}]
        return ExecResult(output=stdout, trace=trace)
    warnings: list[dict[str, str]] = []
    output = _output(reply, warnings)
    error = reply.get("error")
    if reply.get("ok") is False and not error:
        error = "executor reported ok: false"
    result = ExecResult(
        output=output,
        trace=trace_from_script_reply(reply, output),
        usage=make_usage(_count(reply, "inputTokens", warnings), _count(reply, "outputTokens", warnings)),
        cost_usd=_cost(reply, warnings),
        duration_api_ms=_measure(reply, "durationApiMs", warnings),
        num_turns=_count(reply, "numTurns", warnings),
        error=str(error) if error else None,
    )
    if warnings:
        result.trace.meta["warnings"] = warnings
    return result


#: A named file larger than this (an interpreter such as node) is keyed on its size and
#: modification time instead of its content (bytes)
HASH_MAX_BYTES = 32 << 20


def files_digest(argv: list[str]) -> str | None:
    """sha256 (16 hex) of the content of every file the command names by path (its script, the
    program itself when given as a path), so that editing the agent changes its cache key; None
    when it names none. Where the project lies is no part of it."""
    digest, named = hashlib.sha256(), False
    for arg in argv:
        path = Path(arg)
        if not (path.is_absolute() and path.is_file()):
            continue
        named = True
        try:
            st = path.stat()
            data = path.read_bytes() if st.st_size <= HASH_MAX_BYTES else f"{st.st_size}:{st.st_mtime_ns}".encode()
        except OSError as exc:  # unreadable: the run fails on it; key on the error, never on stale content
            data = str(exc).encode()
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()[:16] if named else None


#: A pooled stderr file is emptied once it holds more than this (bytes).
_STDERR_KEEP = 1 << 20


class ScriptExecutor(Executor):
    """Runs ``command`` once per task (in the task's workspace) with the protocol above; its
    relative paths are files in ``folder`` (``resolve_argv``).

    The command is started by ``run_command`` (the cheapest way to run thousands of short
    commands, see ``_spawn``). stderr goes to a pooled temporary file rather than a pipe: it is
    only read when the command fails. Cancellation (a timeout) kills the command's whole
    process group."""

    name = "script"
    non_llm = False
    workspace_leak_allowed = True  # omk's default: the agent works in the config's folder (a warning)

    def __init__(
        self,
        command: str,
        model: str | None = None,
        env: dict[str, str] | None = None,
        folder: Path | None = None,
    ) -> None:
        self.command = command
        self.argv = resolve_argv(shlex.split(command), folder or Path.cwd())
        self.model = model
        self.env = env or {}
        self._stderr_pool: list[IO[bytes]] = []
        self._files = files_digest(self.argv)

    def identity(self) -> str:
        """The command as given (not where the project lies) and the content of the files it names."""
        return f"script:{self.command}" + (f" files:{self._files}" if self._files else "")

    async def run(self, request: ExecRequest) -> ExecResult:
        payload = jsonio.dumps(
            {"model": request.model or self.model, "system": request.system, "prompt": request.prompt}
        )
        env = {**os.environ, **self.env, **request.env} if (self.env or request.env) else None
        cwd = str(request.workspace) if request.workspace else None
        errfile = self._stderr_pool.pop() if self._stderr_pool else tempfile.TemporaryFile()  # noqa: SIM115
        err_start = errfile.seek(0, os.SEEK_END)  # the command's stderr is what it adds from here
        if err_start > _STDERR_KEEP:
            errfile.truncate(0)
            err_start = errfile.seek(0)
        started = time.perf_counter()
        try:
            try:
                code, stdout = await run_command(self.argv, payload, cwd=cwd, env=env, stderr=errfile)
            except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
                if cwd is not None and exc.filename == cwd:  # every later task would meet it too: the run stops
                    raise WorkFolderLost(exc.errno, exc.strerror, cwd) from exc
                if isinstance(exc, FileNotFoundError):
                    raise ExecutorError(f"executor command not found: {self.argv[0]}") from None
                raise ExecutorError(f"executor command is not executable: {self.argv[0]}") from None
            latency = (time.perf_counter() - started) * 1000
            if code != 0:
                raise ExecutorError(f"{Path(self.argv[0]).name} {_ended(code)}: {_last_line(errfile, err_start)}")
        finally:
            self._stderr_pool.append(errfile)
        if len(stdout) > MAX_STDOUT_BYTES:  # the rest was dropped unread: no reply to parse (and no retry)
            return ExecResult(
                "",
                Trace(source=self.name),
                error=f"{Path(self.argv[0]).name} printed more than {MAX_STDOUT_BYTES >> 20} MiB on stdout (a reply is "
                "one JSON object or the answer's text); nothing of it is kept — make the agent print its answer alone",
                latency_ms=latency,
            )
        result = parse_script_stdout(stdout.decode(errors="replace"))
        result.latency_ms = latency
        return result


#: How much of a failed command's stderr is read for its last line (bytes), and how much of that
#: line the error keeps (characters, its end): an agent may print hundreds of megabytes there.
_STDERR_TAIL = 1 << 16
_ERROR_LINE_CHARS = 500


def _last_line(errfile: IO[bytes], start: int) -> str:
    """The last non-empty line a command wrote to ``errfile`` from ``start`` on (its end, when long)."""
    end = errfile.seek(0, os.SEEK_END)
    errfile.seek(max(start, end - _STDERR_TAIL))
    lines = errfile.read().decode(errors="replace").strip().splitlines()
    if not lines:
        return "(no stderr)"
    last = lines[-1].strip()
    return last if len(last) <= _ERROR_LINE_CHARS else "…" + last[-_ERROR_LINE_CHARS:]


def _ended(code: int) -> str:
    """How a command with exit status ``code`` ended: ``exited with 2``, ``was killed by SIGSEGV``."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with {code}"


@register_executor("script")
def _make_script(spec: ExecutorSpec) -> ScriptExecutor:
    command = spec.options.get("command")
    if not command:
        from knowmeter.errors import InputError

        raise InputError(
            "executor 'script' needs a command: --executor 'python my_agent.py' or "
            "executor: {name: script, command: ...} in eval.yaml"
        )
    folder = Path(spec.base_dir) if spec.base_dir else Path.cwd()
    executor = ScriptExecutor(str(command), spec.model, dict(spec.options.get("env") or {}), folder)
    program = executor.argv[0] if executor.argv else ""
    if "/" in program and not (os.path.isfile(program) and os.access(program, os.X_OK)):
        raise UnknownExecutor(f"executor command not found or not executable: {program}")
    return executor
