"""``--json`` output shared by the commands: indented, strict JSON (``knowmeter.jsonio``)."""

from __future__ import annotations

import sys
from typing import Any

from knowmeter import jsonio


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
