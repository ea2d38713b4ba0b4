"""``knowmeter view``: a local, read-only web viewer over the run index (runs, each run's
report, two runs compared, trends per sample set). Standard library HTTP server, GET only."""

from knowmeter.viewer._server import LOOPBACK, make_server

__all__ = [
    "LOOPBACK",
    "make_server",
]
