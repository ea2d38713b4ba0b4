"""Errors the library raises for bad user input."""

from __future__ import annotations


class InputError(Exception):
    """Bad user input (a file, a flag, a sample). The message is the one line the user sees:
    it names the file / sample id / line and says what to fix."""
