"""Executors: the agents under test (and judges), behind one async protocol and a registry."""

from knowmeter.executors._prices import PRICES_AS_OF, price_for
from knowmeter.executors._protocol import (
    ExecRequest,
    ExecResult,
    Executor,
    ExecutorError,
    ExecutorUnavailable,
    ExecutorWrapper,
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
    "PRICES_AS_OF",
    "ExecRequest",
    "ExecResult",
    "Executor",
    "ExecutorError",
    "ExecutorSpec",
    "ExecutorUnavailable",
    "ExecutorWrapper",
    "SkillInstall",
    "UnknownExecutor",
    "command_given_in",
    "create_executor",
    "executor_names",
    "price_for",
    "register_executor",
    "use_pidfd_child_watcher",
]
