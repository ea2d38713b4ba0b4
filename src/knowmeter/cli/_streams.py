"""stdout and stderr that survive a reader who stops reading (``knowmeter eval | head -1``).

Python ignores SIGPIPE, so writing to a pipe whose reader has gone raises ``BrokenPipeError``;
click then exits 1 whatever the command decided, and ``set -o pipefail`` (GitHub Actions' bash)
fails a passing run. Here the standard streams are rebuilt over a file whose first failed write
points the descriptor at ``os.devnull`` (the Python docs' advice for SIGPIPE) and reports the
bytes as written: the command writes nothing more to the closed pipe, finishes its work (report
files, state) and exits with the code it decides."""

from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class _ReaderGoneSafe(io.FileIO):
    """A standard stream's descriptor: after the reader closes the pipe, os.devnull."""

    def write(self, data: ReadableBuffer, /) -> int:
        """Write ``data``; when the reader has gone, drop it and everything after it."""
        try:
            return super().write(data)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self.fileno())
            finally:
                os.close(devnull)
            return memoryview(data).nbytes


def _rebuilt(stream: io.TextIOWrapper) -> io.TextIOWrapper:
    """``stream`` (flushed) with the same descriptor, encoding, errors and buffering, written
    through ``_ReaderGoneSafe`` (directly when the stream had no buffer: ``python -u`` or
    ``PYTHONUNBUFFERED``)."""
    stream.flush()
    raw = _ReaderGoneSafe(stream.fileno(), "w", closefd=False)
    return io.TextIOWrapper(
        raw if type(stream.buffer) is io.FileIO else io.BufferedWriter(raw),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )


def survive_closed_pipes() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` ignore a reader who closed the pipe (each left as
    it is when it is not a text stream over a plain file descriptor: under a test runner, or a
    Windows console, whose raw stream is not a ``FileIO``)."""
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
