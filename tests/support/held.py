"""A script agent a test can hold mid-run, to interrupt or kill the run at a known point."""

from __future__ import annotations

__all__ = ["HELD_AGENT"]

# Answers at once (for $0.01) while the file "hold" beside it is absent, else waits for it to go:
# the test holds the run mid-way, and lets a stalled agent finish (no orphan left) by deleting it.
HELD_AGENT = """\
import json, os, sys, time
json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "calls"), "a") as fh:
    fh.write(".")
while os.path.getsize(os.path.join(here, "calls")) > 3 and os.path.exists(os.path.join(here, "hold")):
    time.sleep(0.05)
print(json.dumps({"output": "Refunds are possible within 30 days of purchase.", "costUSD": 0.01}))
"""
