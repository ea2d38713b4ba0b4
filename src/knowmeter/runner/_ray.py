"""The Ray backend: each task's executor call runs as a Ray task on the cluster.

What travels is the executor's spec (name, model, options) and the request — never a live
executor: the worker builds the executor from the spec (once per worker process) and runs the
request there, so an agent CLI's per-task workspace copy and HOME are created on the worker.
Everything else stays with the driver (``execute_tasks``): cache, budget (reserved before the
task is submitted), the concurrency limit, the per-task timeout (on expiry the Ray task is
cancelled), retries of executor errors, and the single results file.

A worker process or node that dies mid-task is Ray's to handle: the task is resubmitted to
another worker (``MAX_SYSTEM_RETRIES``); only a task that keeps losing its worker comes back as
an executor error, which the driver retries like any other (``--retry``)."""

from __future__ import annotations

import json
from typing import Any

from knowmeter.cluster import connect
from knowmeter.executors import (
    ExecRequest,
    ExecResult,
    Executor,
    ExecutorError,
    ExecutorSpec,
    ExecutorWrapper,
    create_executor,
)

#: Times Ray resubmits a task whose worker process (or node) died (Ray's own default is 3).
MAX_SYSTEM_RETRIES = 3

_WORKER_EXECUTORS: dict[str, Executor] = {}


def _spec_key(spec: ExecutorSpec) -> str:
    return json.dumps([spec.name, spec.model, spec.options, spec.unsealed, spec.base_dir], sort_keys=True, default=str)


def run_on_worker(spec: ExecutorSpec, request: ExecRequest) -> ExecResult:
    """The Ray task: build (or reuse) the executor from ``spec`` in this worker process and run
    ``request``. An ``ExecutorError`` travels back to the driver, which decides about retrying."""
    import anyio

    from knowmeter.executors import use_pidfd_child_watcher

    key = _spec_key(spec)
    executor = _WORKER_EXECUTORS.get(key)
    if executor is None:
        use_pidfd_child_watcher()
        executor = _WORKER_EXECUTORS[key] = create_executor(spec)
    return anyio.run(executor.run, request)


class RayExecutor(ExecutorWrapper):
    """The driver's stand-in for an executor whose ``run`` happens in a Ray task."""

    def __init__(self, local: Executor, spec: ExecutorSpec, remote: Any) -> None:
        super().__init__(local)
        self._spec = spec
        self._remote = remote

    async def run(self, request: ExecRequest) -> ExecResult:
        import ray
        from ray.exceptions import RayError, RayTaskError

        ref = self._remote.remote(self._spec, request)
        finished = False
        try:
            result: ExecResult = await ref
            finished = True
            return result
        except RayTaskError as exc:  # the executor raised on the worker: the same exception here
            finished = True
            cause = exc.cause
            if isinstance(cause, Exception):
                raise cause from None
            raise ExecutorError(f"ray task failed: {exc}") from None
        except RayError as exc:  # the worker kept dying, the node is gone, the object was lost
            finished = True
            first = (str(exc).splitlines() or [""])[0]
            raise ExecutorError(f"ray: {type(exc).__name__}: {first}") from None
        finally:
            if not finished:  # timed out or interrupted on the driver: stop the task on the cluster
                ray.cancel(ref)  # KeyboardInterrupt in the worker: the executor is cancelled, its agent killed


class RayBackend:
    """Runs each task's executor call as a Ray task (see the module docstring)."""

    name = "ray"

    def __init__(self, address: str | None = None) -> None:
        ray = connect(address)
        self._remote = ray.remote(max_retries=MAX_SYSTEM_RETRIES, retry_exceptions=False, num_cpus=1)(run_on_worker)

    def place(self, executor: Executor, spec: ExecutorSpec) -> Executor:
        return RayExecutor(executor, spec, self._remote)
