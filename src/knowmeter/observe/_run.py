"""``observe``: scan session files in worker processes, merge their partial results.

With N workers, N worker processes scan while this process folds their results. Each takes whole
session files (a session and its subagent transcripts stay together) and returns a small
``SessionResult`` per file; the results are folded in chunk order and the report is built at the
end, after the workers are gone. Files go out biggest first, in chunks that shrink towards the
end, so no process is left alone with the largest session or a long last chunk. The report's
figures do not depend on the number of workers; only the inventory order of signals that tie
(same sample id: session files of the same name in different folders) follows the scan order,
which differs between one worker and several.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knowmeter import defaults
from knowmeter.cluster import BACKENDS
from knowmeter.errors import InputError
from knowmeter.observe._files import session_jobs
from knowmeter.observe._merge import Merger
from knowmeter.observe._results import ScanConfig, SessionResult
from knowmeter.observe._window import TimeWindow

if TYPE_CHECKING:
    from knowmeter.analysis import KnowledgeFile
    from knowmeter.observe._report import HealthReport

_CONFIG: ScanConfig | None = None


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _init_worker(cfg: ScanConfig) -> None:
    global _CONFIG
    _CONFIG = cfg


def _scan_chunk(jobs: list[tuple[Path, str]]) -> list[SessionResult]:
    assert _CONFIG is not None, "worker not initialised"
    return _scan_with(_CONFIG, jobs)


def _chunks(jobs: list[tuple[Path, str]], workers: int) -> Iterator[list[tuple[Path, str]]]:
    """The jobs in chunks that shrink as the work runs out (guided scheduling): few round trips
    while there is much left, single files at the end so no worker is left alone with a long tail."""
    i = 0
    while i < len(jobs):
        size = max(1, min(16, (len(jobs) - i) // (4 * workers)))
        yield jobs[i : i + size]
        i += size


def _results(
    jobs: list[tuple[Path, str]],
    cfg: ScanConfig,
    workers: int | None,
    ray_address: str | None = None,
    *,
    backend: str = defaults.BACKEND,
) -> Iterator[SessionResult]:
    if backend == "ray":
        from knowmeter.cluster import cluster_cpus, connect
        from knowmeter.observe._ray import ray_results

        ray = connect(ray_address)
        order = sorted(jobs, key=lambda j: j[0].stat().st_size, reverse=True)
        yield from ray_results(ray, list(_chunks(order, workers or cluster_cpus(ray))), cfg)
        return
    workers = workers or default_workers()
    if workers <= 1 or len(jobs) <= 1:
        yield from _scan_with(cfg, jobs)
        return
    # Load the scanner (and the analysis it needs) before forking: the workers share it instead
    # of each importing it again.
    from concurrent.futures import ProcessPoolExecutor

    import knowmeter.observe._scan  # noqa: F401

    order = sorted(jobs, key=lambda j: j[0].stat().st_size, reverse=True)
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(cfg,)) as pool:
        for chunk in pool.map(_scan_chunk, _chunks(order, workers)):
            yield from chunk


def _scan_with(cfg: ScanConfig, jobs: list[tuple[Path, str]]) -> list[SessionResult]:
    from knowmeter.observe._scan import scan_sessions

    return scan_sessions(cfg, jobs)


def observe(
    paths: Sequence[Path | str],
    *,
    window: TimeWindow | None = None,
    skills: Iterable[str] | None = None,
    kb: Path | str | None = None,
    workers: int | None = None,
    backend: str = defaults.BACKEND,
    ray_address: str | None = None,
    count_retried_commands: bool = False,
) -> HealthReport:
    """Skill health over the Claude Code / Codex session traces under ``paths``.

    ``window`` keeps the segments that started in it; ``skills`` keeps only those skills (and drops
    the ``(no skill)`` row); ``kb`` adds coverage of that folder's files; ``workers`` processes
    share the files (default: every core); ``backend="ray"`` scans them as Ray tasks on the cluster at
    ``ray_address`` (default ``RAY_ADDRESS``, else a local Ray instance), ``workers`` then sizing the
    chunks as that many local processes would (default: the cluster's CPUs).
    ``count_retried_commands`` counts retried commands (a failing test or commit loop) as gap
    signals; by default they are listed apart, outside the gap rates. Raises ``InputError``
    for a path that does not exist, a file named directly that is not an agent trace, or folders
    without any agent session."""
    roots = [Path(p).expanduser() for p in paths]
    if not roots:
        raise InputError(
            "observe: no path given; pass a Claude projects folder, session files or a Codex sessions folder"
        )
    if backend not in BACKENDS or (ray_address is not None and backend != "ray"):
        raise InputError(
            f"observe: backend {backend!r} with ray address {ray_address!r}: use backend local, or "
            "ray (with an optional ray address)"
        )
    wanted = frozenset(s.strip() for s in skills if s.strip()) if skills is not None else None
    if wanted is not None and not wanted:
        raise InputError("--skills: no skill name given; pass names separated by commas")
    unreadable: list[str] = []
    jobs = session_jobs(roots, unreadable)
    kb_files: list[KnowledgeFile] | None = None
    cfg = ScanConfig(window or TimeWindow(), wanted, None, count_retried_commands)
    if kb is not None:
        from knowmeter.observe._kb import load_kb

        kb_files, index = load_kb(Path(kb))
        cfg = ScanConfig(cfg.window, wanted, index, count_retried_commands)
    merger = Merger()
    merger.skipped.extend(unreadable)
    for res in _results(jobs, cfg, workers, ray_address, backend=backend):
        merger.add(res)
    if merger.files == 0 and merger.mtime_skips == 0:
        first = merger.skipped[0] if merger.skipped else ""
        raise InputError(
            f"no agent session traces among {len(jobs)} candidate file(s) under "
            f"{', '.join(map(str, roots))} (first: {first})"
        )
    from knowmeter.observe._report import build_report  # the report models: built once, at the end

    return build_report(
        merger,
        paths=[str(p) for p in paths],
        window=cfg.window.to_dict(),
        skills=sorted(wanted) if wanted else None,
        kb=str(kb) if kb is not None else None,
        kb_files=kb_files,
    )
