"""Room for the run's open files: every task in flight holds a few descriptors (the pipes to its
agent, its exit watch) besides the ones the run itself keeps open. A shell whose soft limit is too
low for ``--concurrency`` (256 by default on macOS) would make tasks fail half-way with "too many
open files"; the soft limit is raised for this process, up to the hard one, before any task
starts. Agents started afterwards inherit the raised soft limit (every variant alike)."""

from __future__ import annotations

#: descriptors the run keeps open whatever its concurrency (measured ≈ 12 with a script agent)
BASE = 64
#: descriptors a task in flight holds (measured ≈ 4 with a script agent, 6 while it is spawned)
PER_TASK = 8


def needed(concurrency: int) -> int:
    """Open files a run of ``concurrency`` tasks at once may hold."""
    return BASE + PER_TASK * max(1, concurrency)


def make_room(concurrency: int) -> None:
    """Raise this process's soft limit on open files to what ``concurrency`` needs, as far as the
    hard limit allows (never lowered; a limit still too low shows as the run stopping with one
    line saying so)."""
    try:
        import resource
    except ImportError:  # not POSIX: no such limit to raise
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed(concurrency)
    if soft == resource.RLIM_INFINITY or soft >= want:
        return
    raised = want if hard == resource.RLIM_INFINITY else min(hard, want)
    if raised > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
