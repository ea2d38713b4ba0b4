"""Turning user-facing errors into one clear line and exit code 2."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import click

from knowmeter.errors import InputError
from knowmeter.exit_codes import EXIT_INPUT, EXIT_INTERNAL, stopped_exit_code


def fail(message: str) -> NoReturn:
    """Print ``knowmeter: error: <message>`` to stderr (made printable) and exit 2."""
    from knowmeter.printable import printable

    click.echo(f"knowmeter: error: {printable(message)}", err=True)
    sys.exit(EXIT_INPUT)


def crash(exc: BaseException) -> NoReturn:
    """An unexpected exception: write its traceback to a log file, print one line naming the
    file, exit ``EXIT_INTERNAL`` (so CI tells a crash from a failed gate)."""
    import tempfile
    import time
    import traceback

    text = "".join(traceback.format_exception(exc))
    try:
        fd, name = tempfile.mkstemp(prefix=f"knowmeter-crash-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".log")
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(f"knowmeter {' '.join(sys.argv[1:])}\n{text}")
        where = f"traceback in {name}"
    except OSError:
        where = "the traceback could not be written to a log file"
    first = (str(exc).splitlines() or [""])[0][:200]
    click.echo(
        f"knowmeter: internal error: {type(exc).__name__}: {first} — this is a bug, please report it; {where}", err=True
    )
    sys.exit(EXIT_INTERNAL)


@contextmanager
def input_errors() -> Iterator[None]:
    """Turn ``InputError`` (and the library's other user errors) into one line + exit 2, and
    Ctrl-C into one line + exit 130, or 143 after SIGTERM (click alone would print ``Aborted!``
    and exit 1)."""
    try:
        yield
    except InputError as exc:
        fail(str(exc))
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
