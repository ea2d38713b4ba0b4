"""Errors the library raises on bad user input (``RunInterrupted``, a run stopped by Ctrl-C, is
raised by ``knowmeter.api``, where the run and its report are)."""


class InputError(Exception):
    """Bad user input (a file, a flag, a sample). The message is the one line the user sees:
    it names the file / sample id / line and says what to fix."""
