"""Turning user-facing errors into one clear line and exit code 2."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import click

from knowmeter.errors import InputError
from knowmeter.exit_codes import EXIT_INPUT, EXIT_INTERNAL, stopped_exit_code

#: an error line longer than this is cut; the whole message goes to a log file the line names
MAX_LINE_CHARS = 500


def fail(message: str) -> NoReturn:
    """Print ``error_line(message)`` to stderr and exit 2."""
    click.echo(error_line(message), err=True)
    sys.exit(EXIT_INPUT)


def error_line(message: str) -> str:
    """``knowmeter: error: <message>``, made printable, secrets scrubbed, cut to ``MAX_LINE_CHARS``
    with the whole message in a log file the line names."""
    from knowmeter._secrets import scrub
    from knowmeter.printable import printable

    line = printable(scrub(message)).encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate
    if len(line) > MAX_LINE_CHARS:
        where = _log_file("error", scrub(message))
        line = f"{line[:MAX_LINE_CHARS]}… ({f'the whole message is in {where}' if where else 'cut'})"
    return f"knowmeter: error: {line}"


def _log_file(kind: str, text: str) -> str | None:
    """Write ``text`` to a new ``knowmeter-<kind>-<time>-*.log`` in the temp folder; its path, or
    None when it cannot be written (a full disk)."""
    import tempfile
    import time

    try:
        fd, name = tempfile.mkstemp(prefix=f"knowmeter-{kind}-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".log")
        with open(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
    except OSError:
        return None
    return name


def crash(exc: BaseException) -> NoReturn:
    """An unexpected exception: write its traceback to a log file (secrets scrubbed), print one
    line naming the file, exit ``EXIT_INTERNAL`` (so CI tells a crash from a failed gate). An
    exception the machine caused (a full disk, a read-only folder) is one line saying what to
    do, exit 2 (``knowmeter._faults``)."""
    import traceback

    from knowmeter._faults import environment_fault
    from knowmeter._secrets import scrub

    fault = environment_fault(exc)
    if fault is not None:
        fail(fault)

    text = "".join(traceback.format_exception(exc))
    name = _log_file("crash", scrub(f"knowmeter {' '.join(sys.argv[1:])}\n{text}"))
    where = f"traceback in {name}" if name else "the traceback could not be written to a log file"
    first = scrub((str(exc).splitlines() or [""])[0][:200])
    click.echo(
        f"knowmeter: internal error: {type(exc).__name__}: {first} — this is a bug, please report it; {where}", err=True
    )
    sys.exit(EXIT_INTERNAL)


@contextmanager
def input_errors() -> Iterator[None]:
    """Turn ``InputError`` (and the library's other user errors) into one line + exit 2, and
    Ctrl-C into one line + exit 130, or 143 after SIGTERM (click alone would print ``Aborted!``
    and exit 1)."""
    from knowmeter._faults import environment_fault

    try:
        yield
    except InputError as exc:
        fail(str(exc))
    except Exception as exc:  # a full disk, a read-only folder, a path too long: one line too
        fault = environment_fault(exc)
        if fault is None:
            raise
        fail(fault)
    except KeyboardInterrupt as exc:
        click.echo("knowmeter: interrupted", err=True)
        sys.exit(stopped_exit_code(exc))


def guarded(fn: Callable[..., None]) -> Callable[..., None]:
    """Decorator form of ``input_errors`` for click command callbacks."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> None:
        with input_errors():
            fn(*args, **kwargs)

    return wrapper
