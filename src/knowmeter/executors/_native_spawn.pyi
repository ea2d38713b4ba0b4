"""Types of the C extension ``_native_spawn.c`` (the native spawner of issue 32)."""

from collections.abc import Mapping, Sequence

class Batch:
    """The commands of one event loop, run by the process's worker threads."""

    def fileno(self) -> int:
        """The eventfd signalled when a command finished."""
    def submit(
        self,
        argv: Sequence[str | bytes],
        executables: Sequence[bytes] | None,
        env: Mapping[str, str] | None,
        cwd: str | bytes | None,
        stdin: bytes,
        stderr: int,
        grace: float,
        limit: int,
    ) -> int:
        """Hand a command to a worker thread; returns its job id at once. ``executables``: the
        paths to try in turn (None: ``argv[0]``); ``env`` None: the process's environment;
        ``stderr``: a descriptor (duplicated); ``grace``: seconds stdout may stay open after the exit;
        ``limit``: stdout past its first ``limit`` + 1 bytes is read and dropped."""
    def drain(self) -> list[tuple[int, tuple[int, bytes] | None, tuple[int, bytes] | None]]:
        """Every command finished since the last drain: (job, (exit code, stdout) or None,
        (errno, the path it concerns) when it could not start, else None); both None: killed
        before it started."""
    def kill(self, job: int, /) -> None:
        """SIGKILL the job's process group (a job still queued is dropped)."""
    def close(self) -> None:
        """Kill what still runs (its worker reaps it); the batch is unusable after."""

def pool_state() -> tuple[int, int, int]:
    """(threads, idle threads, queued commands) of the process's pool."""

def configure(*, max_threads: int = ..., idle_s: float = ...) -> tuple[int, float]:
    """Set the pool's thread cap and idle lifetime (seconds); returns the previous pair."""
