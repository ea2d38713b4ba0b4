"""Planning and executing tasks: concurrency, timeouts, retries, cache, budget."""

from knowmeter.runner._backend import Backend, LocalBackend, open_backend
from knowmeter.runner._budget import HEADROOM, Budget, BudgetExhausted, MeteredExecutor, budget_warnings, invalid_cost
from knowmeter.runner._cache import BLOB_MIN_CHARS, CACHE_FILE, ResponseCache, cache_key, task_cache_key
from knowmeter.runner._execute import (
    ExecutionSettings,
    ExecutionStats,
    OnRecord,
    PostProcess,
    build_request,
    execute_tasks,
)
from knowmeter.runner._interrupt import RunStopped, until_interrupted
from knowmeter.runner._ledger import LEDGER_FILE, Ledger, LedgerState, Reservation, StoredSpend, read_ledger
from knowmeter.runner._plan import (
    Task,
    directory_fingerprint,
    plan_tasks,
    workspace_for,
    workspace_problem,
)
from knowmeter.runner._shard import Shard, assign_samples, shard_tasks
from knowmeter.store import task_id

__all__ = [
    "BLOB_MIN_CHARS",
    "CACHE_FILE",
    "HEADROOM",
    "LEDGER_FILE",
    "Backend",
    "Budget",
    "BudgetExhausted",
    "ExecutionSettings",
    "ExecutionStats",
    "Ledger",
    "LedgerState",
    "LocalBackend",
    "MeteredExecutor",
    "OnRecord",
    "PostProcess",
    "Reservation",
    "ResponseCache",
    "RunStopped",
    "Shard",
    "StoredSpend",
    "Task",
    "assign_samples",
    "budget_warnings",
    "build_request",
    "cache_key",
    "directory_fingerprint",
    "execute_tasks",
    "invalid_cost",
    "open_backend",
    "plan_tasks",
    "read_ledger",
    "shard_tasks",
    "task_cache_key",
    "task_id",
    "until_interrupted",
    "workspace_for",
    "workspace_problem",
]
