"""Planning and executing tasks: concurrency, timeouts, retries, cache, budget."""

from knowmeter.runner._budget import HEADROOM, Budget, BudgetExhausted, MeteredExecutor, invalid_cost
from knowmeter.runner._cache import ResponseCache, cache_key
from knowmeter.runner._execute import ExecutionSettings, ExecutionStats, build_request, execute_tasks
from knowmeter.runner._plan import (
    Task,
    directory_fingerprint,
    plan_tasks,
    task_id,
    workspace_for,
    workspace_problem,
)
from knowmeter.runner._shard import Shard, assign_samples, shard_tasks

__all__ = [
    "HEADROOM",
    "Budget",
    "BudgetExhausted",
    "ExecutionSettings",
    "ExecutionStats",
    "MeteredExecutor",
    "ResponseCache",
    "Shard",
    "Task",
    "assign_samples",
    "build_request",
    "cache_key",
    "directory_fingerprint",
    "execute_tasks",
    "invalid_cost",
    "plan_tasks",
    "shard_tasks",
    "task_id",
    "workspace_for",
    "workspace_problem",
]
