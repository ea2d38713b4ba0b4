"""Output shared by the commands: ``--json`` (indented, strict JSON, ``knowmeter.jsonio``) and
the console every human-readable printer uses."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from knowmeter import defaults, jsonio
from knowmeter.settings import BUDGET_BINDS

if TYPE_CHECKING:
    from rich.console import Console

    from knowmeter.api import RunInterrupted


F = TypeVar("F", bound=Callable[..., Any])


class NumberRange(click.FloatRange):
    """click's ``FloatRange`` that refuses nan: nan passes every bound (``--max-gap-rate nan`` was
    taken, and failed the gate as 'max nan%')."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail(f"{value!r} is not a number.", param, ctx)
        return number


def unwritable(path: Path) -> str | None:
    """Why a file cannot be written at ``path``, or None when it can (checked before any work: a
    run is never lost to a path its report cannot be written to). A missing folder is fine where
    it can be made."""
    folder = next(p for p in path.absolute().parents if p.exists())
    if not folder.is_dir():
        return f"{folder} is a file, so {path} cannot be written"
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"cannot write in {folder} ({exc.strerror})"
    if path.exists() and not os.access(path, os.W_OK):
        return f"{path} is not writable"
    return None


def _writable(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """``value`` when a file can be written there (``unwritable``)."""
    problem = None if value is None else unwritable(value)
    if problem is not None:
        raise click.BadParameter(problem)
    return value


def ci_output_options(command: F) -> F:
    """``--junit FILE``, ``--markdown FILE`` and ``--csv FILE``, as ``eval``, ``report`` and
    ``merge`` take them."""
    command = click.option(
        "--csv",
        type=click.Path(path_type=Path, dir_okay=False),
        callback=_writable,
        help="Also write the per-sample results as CSV: a row per sample × variant × repeat (scores, "
        "assertions, gap signals, cost, latency, output; unknown values are empty cells).",
    )(command)
    command = click.option(
        "--markdown",
        type=click.Path(path_type=Path, dir_okay=False),
        callback=_writable,
        help="Also write a Markdown summary (appended to $GITHUB_STEP_SUMMARY too when it is set).",
    )(command)
    return click.option(
        "--junit",
        type=click.Path(path_type=Path, dir_okay=False),
        callback=_writable,
        help="Also write JUnit XML: a test case per sample × variant and one for the outcome.",
    )(command)


def output_dir_option(help: str = "Where runs are stored.", **attrs: Any) -> Callable[[F], F]:
    """``--output-dir``, its default ``knowmeter.defaults.OUTPUT_DIR`` (shown by ``--help``)."""
    return click.option("--output-dir", default=defaults.OUTPUT_DIR, show_default=True, help=help, **attrs)


def budget_option(covers: str) -> Callable[[F], F]:
    """``--budget-usd``: ``covers`` says what it covers; how a budget binds is the same everywhere."""
    return click.option(
        "--budget-usd",
        type=NumberRange(min=0),
        help=covers + BUDGET_BINDS,
    )


def print_json(data: Any) -> None:
    """Write ``data`` to stdout as indented JSON (non-finite numbers as null)."""
    text = jsonio.dumps(data, indent=True) + b"\n"
    out = sys.stdout
    binary = getattr(out, "buffer", None)
    if binary is None:  # a text-only stream (redirected in-process, a notebook)
        out.write(text.decode())
        return
    out.flush()
    binary.write(text)
    binary.flush()


#: Width of piped output when ``COLUMNS`` does not say (logs, CI).
PIPED_WIDTH = 120


def console(*, stderr: bool = False, markup: bool = False, piped_width: int = PIPED_WIDTH) -> Console:
    """A rich console for a command's output: the terminal's width, or ``COLUMNS`` when set
    (piped too), else ``piped_width``. Highlighting and emoji codes are off, and markup too
    unless the caller escapes everything it prints from data, so nothing printed from a report
    or a trace is interpreted."""
    from rich.console import Console

    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else None
    stream = sys.stderr if stderr else sys.stdout
    if width is None and not stream.isatty():
        width = piped_width
    return Console(file=stream, width=width, markup=markup, highlight=False, emoji=False)


def interrupted_line(stop: RunInterrupted, output_dir: str | None) -> str:
    """What an interrupted run's command prints last: what is stored and how to continue."""
    import signal

    from knowmeter.store import resume_command

    command = resume_command(stop.run_id, comprehension=stop.report.comprehension is not None)
    if output_dir:
        command += f" --output-dir {output_dir}"
    how = "" if stop.signum == signal.SIGINT else f" by {signal.Signals(stop.signum).name}"
    run = stop.report.run
    return f"interrupted{how}: {run.tasks_done}/{run.tasks_total} tasks are stored; continue with: {command}"
