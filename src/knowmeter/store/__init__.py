"""Run storage: run directories (run.json, results.jsonl, report.json) and the SQLite index."""

from knowmeter.store._graderecord import (
    AssertionResult,
    DimensionOutcome,
    Grade,
    JudgeOutcome,
    Layers,
    OutputCut,
)
from knowmeter.store._index import INDEX_FILE, list_runs, open_index, upsert_run, variant_history
from knowmeter.store._merge import merge_shards
from knowmeter.store._rundir import (
    ResultsWriter,
    RunDir,
    atomic_file,
    find_run,
    iter_results,
    new_run_id,
    read_json,
    write_json_atomic,
)
from knowmeter.store._runrecord import (
    LOCAL_SETTINGS,
    RUN_SCHEMA_VERSION,
    check_schema_version,
    plan_hash,
    plan_parts,
    resume_command,
    utc_timestamp,
)
from knowmeter.store._storedtasks import JoinedTasks, StoredTasks, finished_task_ids, task_records
from knowmeter.store._taskrecord import (
    AnalysisRecord,
    ExecRecord,
    Processed,
    TaskRecord,
    TraceMetaRecord,
    TraceRecord,
    WarningRecord,
    task_id,
)

__all__ = [
    "INDEX_FILE",
    "LOCAL_SETTINGS",
    "RUN_SCHEMA_VERSION",
    "AnalysisRecord",
    "AssertionResult",
    "DimensionOutcome",
    "ExecRecord",
    "Grade",
    "JoinedTasks",
    "JudgeOutcome",
    "Layers",
    "OutputCut",
    "Processed",
    "ResultsWriter",
    "RunDir",
    "StoredTasks",
    "TaskRecord",
    "TraceMetaRecord",
    "TraceRecord",
    "WarningRecord",
    "atomic_file",
    "check_schema_version",
    "find_run",
    "finished_task_ids",
    "iter_results",
    "list_runs",
    "merge_shards",
    "new_run_id",
    "open_index",
    "plan_hash",
    "plan_parts",
    "read_json",
    "resume_command",
    "task_id",
    "task_records",
    "upsert_run",
    "utc_timestamp",
    "variant_history",
    "write_json_atomic",
]
