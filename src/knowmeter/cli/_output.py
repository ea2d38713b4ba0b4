"""``--json`` output shared by the commands: indented, strict JSON (``knowmeter.jsonio``)."""

from __future__ import annotations

import sys
from typing import Any

from knowmeter import jsonio


def print_json(data: Any) -> None:
    """Write ``data`` to stdout as indented JSON (non-finite numbers as null)."""
    out = sys.stdout
    out.flush()
    out.buffer.write(jsonio.dumps(data, indent=True) + b"\n")
    out.buffer.flush()
