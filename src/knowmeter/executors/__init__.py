"""Executors: the agents under test (and judges), behind one async protocol and a registry."""

from knowmeter.executors._protocol import (
    ExecRequest,
    ExecResult,
    Executor,
    ExecutorError,
    ExecutorUnavailable,
    SkillInstall,
)
from knowmeter.executors._registry import (
    ExecutorSpec,
    UnknownExecutor,
    command_given_in,
    create_executor,
    executor_names,
    register_executor,
)
from knowmeter.executors._spawn import use_pidfd_child_watcher

__all__ = [
    "ExecRequest",
    "ExecResult",
    "Executor",
    "ExecutorError",
    "ExecutorSpec",
    "ExecutorUnavailable",
    "SkillInstall",
    "UnknownExecutor",
    "command_given_in",
    "create_executor",
    "executor_names",
    "register_executor",
    "use_pidfd_child_watcher",
]
