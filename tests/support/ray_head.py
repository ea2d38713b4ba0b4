"""Holds a local Ray instance for the tests (2 CPUs, no dashboard, loopback only, started the way
``knowmeter eval --backend ray`` starts one): prints its address, stops it when stdin closes."""

from __future__ import annotations

import sys

from knowmeter.cluster import connect

if __name__ == "__main__":
    ray = connect(None, num_cpus=2)
    print(ray.get_runtime_context().gcs_address, flush=True)
    sys.stdin.read()
    ray.shutdown()
