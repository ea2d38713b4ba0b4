"""``observe --backend ray``: the session files' chunks scanned as Ray tasks across the cluster.

The chunks are the local multi-process path's (biggest files first, shrinking towards the end),
the scan configuration is put in the object store once, and the results come back in chunk
order — so the merge, and the report, are exactly those of ``--workers N`` on one machine. The
trace files are read by the workers: they must lie at the same path on every node (a shared
or synchronised folder); on a local Ray instance they do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from knowmeter.observe._results import ScanConfig, SessionResult


def _scan_remote(cfg: ScanConfig, jobs: list[tuple[Path, str]]) -> list[SessionResult]:
    from knowmeter.observe._scan import scan_sessions

    return scan_sessions(cfg, jobs)


def ray_results(ray: Any, chunks: list[list[tuple[Path, str]]], cfg: ScanConfig) -> Iterator[SessionResult]:
    """Scan ``chunks`` as Ray tasks (all submitted at once; Ray spreads them over the cluster's
    CPUs and resubmits a chunk whose worker died) and yield their results in chunk order."""
    scan = ray.remote(num_cpus=1, max_retries=3, retry_exceptions=False)(_scan_remote)
    cfg_ref = ray.put(cfg)
    refs = [scan.remote(cfg_ref, chunk) for chunk in chunks]
    for ref in refs:
        yield from ray.get(ref)
