"""stdout and stderr that survive a reader who stops reading (``knowmeter eval | head -1``), an
encoding that cannot write every character (``PYTHONIOENCODING=ascii``) and being closed from the start.

Python ignores SIGPIPE, so writing to a pipe whose reader has gone raises ``BrokenPipeError``;
click then exits 1 whatever the command decided, and ``set -o pipefail`` (GitHub Actions' bash)
fails a passing run. Here the standard streams are rebuilt over a file whose first failed write
points the descriptor at ``os.devnull`` (the Python docs' advice for SIGPIPE) and reports the
bytes as written: the command writes nothing more to the closed pipe, finishes its work (report
files, state) and exits with the code it decides."""

from __future__ import annotations

import codecs
import io
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

#: the error handler of a standard stream whose encoding cannot write every character
#: (``PYTHONIOENCODING=ascii``, ``latin-1:strict``): ``\uXXXX`` escapes, which keep ``--json`` valid
ESCAPE = "knowmeter-json-escape"


def _json_escape(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start : exc.end]
    units = text.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)), exc.end


codecs.register_error(ESCAPE, _json_escape)


class _ReaderGoneSafe(io.FileIO):
    """A standard stream's descriptor: after the reader closes the pipe, os.devnull."""

    def write(self, data: ReadableBuffer, /) -> int:
        """Write ``data``; when the reader has gone, drop it and everything after it. Another
        failure (a full disk under ``> file``) names the stream, for the line that reports it."""
        try:
            return super().write(data)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self.fileno())
            finally:
                os.close(devnull)
            return memoryview(data).nbytes
        except OSError as exc:
            if exc.filename is None:
                exc.filename = "standard output" if self.fileno() == 1 else "standard error"
            raise


def _rebuilt(stream: io.TextIOWrapper) -> io.TextIOWrapper:
    """``stream`` (flushed) with the same descriptor, encoding, errors and buffering, written
    through ``_ReaderGoneSafe`` (directly when the stream had no buffer: ``python -u`` or
    ``PYTHONUNBUFFERED``)."""
    stream.flush()
    raw = _ReaderGoneSafe(stream.fileno(), "w", closefd=False)
    return io.TextIOWrapper(
        raw if type(stream.buffer) is io.FileIO else io.BufferedWriter(raw),
        encoding=stream.encoding,
        errors=ESCAPE if stream.errors == "strict" else stream.errors,
        line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )


def survive_closed_pipes() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` ignore a reader who closed the pipe and write what
    their encoding cannot as ``\\uXXXX`` (each left as it is when it is not a text stream over a
    plain file descriptor: under a test runner, or a Windows console, whose raw stream is not a
    ``FileIO``). A standard stream the command was started without (``knowmeter runs >&-``) is
    ``os.devnull``, so that no file the command opens takes its descriptor."""
    _closed_to_devnull()
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(stream, io.TextIOWrapper):
            continue
        raw = stream.buffer if type(stream.buffer) is io.FileIO else getattr(stream.buffer, "raw", None)
        if type(raw) is not io.FileIO:
            continue
        try:
            setattr(sys, name, _rebuilt(stream))
        except (OSError, ValueError):  # no descriptor, or already closed: nothing to protect
            continue


def _closed_to_devnull() -> None:
    """Open ``os.devnull`` on each of descriptors 0–2 that is closed, and make a missing
    ``sys.stdin`` / ``sys.stdout`` / ``sys.stderr`` (None) a stream over it."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))  # noqa: SIM115 - the process's own stream
