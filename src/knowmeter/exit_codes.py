"""Every exit code knowmeter's commands use, in one place (documented in the README).

``knowmeter eval`` / ``report`` take theirs from the run's ``Decision`` (``knowmeter.decision``);
input errors and interrupts are set by the command line."""

from __future__ import annotations

from signal import SIGINT

#: PROGRESS (or a passing SOLO), complete, every gate passed — or ``--report-only``.
EXIT_OK = 0
#: Any other outcome: another verdict, a failed gate, an incomplete or unmeasured run.
EXIT_NOT_PASSED = 1
#: Bad input (config, samples, flags, a damaged stored file): one line on stderr, nothing run.
EXIT_INPUT = 2
#: Internal error (a bug): one line on stderr naming a log file that holds the traceback.
EXIT_INTERNAL = 3
#: Interrupted (Ctrl-C / SIGINT); the run can be resumed with ``knowmeter eval --resume RUN``.
EXIT_INTERRUPTED = 130
#: Terminated (SIGTERM: a CI cancel, ``timeout``, ``docker stop``), handled as Ctrl-C is; 128 + 15,
#: the code a shell reports for a process SIGTERM killed, so callers see what they sent.
EXIT_TERMINATED = 143


def stopped_exit_code(stop: BaseException) -> int:
    """The exit code for an interrupted command: 128 + the signal that stopped it (an exception
    carrying ``signum``, as ``RunInterrupted`` does): ``EXIT_TERMINATED`` after SIGTERM, 129 after
    SIGHUP, else ``EXIT_INTERRUPTED``."""
    signum = getattr(stop, "signum", SIGINT)
    return 128 + int(signum) if isinstance(signum, int) else EXIT_INTERRUPTED
