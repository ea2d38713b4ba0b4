"""Errors the library raises: bad user input, and a run interrupted by Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowmeter.report import Report


class InputError(Exception):
    """Bad user input (a file, a flag, a sample). The message is the one line the user sees:
    it names the file / sample id / line and says what to fix."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM: ``signum``) during a run, after the finished tasks were stored and the
    run was finished as ``interrupted``: ``report`` is its report (decision INCOMPLETE);
    ``run_id`` resumes it. A ``KeyboardInterrupt``, so code that stops on Ctrl-C still stops."""

    def __init__(self, run_id: str, report: Report, signum: int = signal.SIGINT) -> None:
        super().__init__(f"run {run_id} interrupted: {report.run.tasks_done}/{report.run.tasks_total} tasks are stored")
        self.run_id = run_id
        self.report = report
        self.signum = signum
