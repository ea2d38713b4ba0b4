"""Where the agent runs: the backend interface of the runner.

``execute_tasks`` (the driver) keeps the plan, the cache, the budget, the concurrency limit,
per-task timeouts and retries, and is the only writer of ``results.jsonl``; a backend only
decides where an executor's ``run`` happens. ``local`` runs it in this process; ``ray`` ships the
executor's spec and the request to a Ray task (``knowmeter.runner._ray``)."""

from __future__ import annotations

from typing import Protocol

from knowmeter import defaults
from knowmeter.errors import InputError
from knowmeter.executors import Executor, ExecutorSpec


class Backend(Protocol):
    """Places an executor's tasks."""

    #: ``local`` or ``ray``
    name: str

    def place(self, executor: Executor, spec: ExecutorSpec) -> Executor:
        """The executor the runner calls: ``executor`` itself, or a stand-in whose ``run`` happens
        elsewhere (built there from ``spec``) and whose identity is ``executor``'s."""
        ...


class LocalBackend:
    """Tasks run in this process (agents as its child processes)."""

    name = "local"

    def place(self, executor: Executor, spec: ExecutorSpec) -> Executor:
        return executor


def open_backend(name: str = defaults.BACKEND, address: str | None = None) -> Backend:
    """The backend called ``name`` (``local`` or ``ray``); ``address`` is the Ray cluster's
    (default ``RAY_ADDRESS``, else a local Ray instance)."""
    if address is not None and name != "ray":
        raise InputError("--ray-address needs --backend ray")
    if name == "local":
        return LocalBackend()
    if name == "ray":
        from knowmeter.runner._ray import RayBackend

        return RayBackend(address)
    raise InputError(f"unknown backend {name!r}: use local or ray")
